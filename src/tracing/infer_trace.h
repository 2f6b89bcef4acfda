// InferTrace: the one tracing path of an inference request, shared by HTTP (KServe
// routes), gRPC (ModelInfer, ModelStreamInfer) and the OpenAI routes (openai/). A traced
// request gets one SERVER root span "infer <model>" with one child per stage:
//
//   parse      received -> decoded (the transport's codec)
//   queue      entered the scheduler -> its batch started
//   compute    batch start -> end (infera.batch_rows, infera.batch_requests)
//   serialize  encoding the answer
//
// A text generation (Generated(), from the final output's GenerationTimings) adds
// instead of queue and compute, for each generation of the request (an OpenAI request
// has one per choice: infera.choice, its index, on each of its spans):
//
//   tokenize    parsed (or read) -> queued on the engine: chat template, tokenising, the
//               length check, on the model's prompt worker (and the wait for it)
//   queue       queued -> first engine step (or -> ended, when never scheduled)
//   prefill     first engine step -> first output token (or -> ended)
//   decode      first output token -> last output
//   detokenize  the time output processing (detokenising, stop strings) took, summed
//               over the generation; drawn as one span ending with the last output
//
// A stage whose time points the generation never reached (cancelled while queued: no
// prefill, decode) is left out, as is a detokenize time of 0.
//
// Root attributes: infera.model, infera.request_id, infera.protocol ("http", "grpc" or
// "openai") plus the transport's status attribute (http.status_code or
// rpc.grpc.status_code). Whether a request is traced is TraceSettings' decision.
//
// Not thread-safe: owned by one request's path (moved into its completion).
#ifndef INFERA_TRACING_INFER_TRACE_H_
#define INFERA_TRACING_INFER_TRACE_H_

#include <optional>
#include <string>
#include <string_view>

#include "api/generation.h"
#include "api/infer_request.h"
#include "common/clock.h"
#include "tracing/request_trace.h"
#include "tracing/trace_settings.h"
#include "tracing/tracer.h"

namespace infera {

class InferTrace {
 public:
  // Where traced requests go: both null (tracing off) or both set, outliving requests.
  struct Sink {
    TraceSettings* settings = nullptr;
    Tracer* tracer = nullptr;
  };

  // nullopt when the sink is off or the request is not sampled.
  static std::optional<InferTrace> Start(const Sink& sink, std::string_view model,
                                         std::optional<std::string_view> traceparent,
                                         SteadyTime received);

  void Parsed(SteadyTime decoded) {
    trace_.AddStage("parse", received_, decoded);
    parsed_ = decoded;
  }
  // queue and compute, from the response's timings.
  void Ran(const RequestTimings& timings);
  // The stages of generation number `choice` of this request (see the file comment).
  void Generated(const GenerationTimings& timings, int64_t choice);
  void Serialized(SteadyTime start, SteadyTime end) { trace_.AddStage("serialize", start, end); }

  std::string trace_id() const { return ToHex(trace_.trace_id()); }
  // The traceparent naming our root span (for the response's headers / metadata).
  std::string traceparent() const { return trace_.traceparent(); }

  // Closes the root span at `end` and hands every span to the tracer.
  // `status_key` / `status_value`: the transport's status attribute; `error` set for a
  // failed request.
  void Finish(std::string_view protocol, std::string_view request_id, std::string_view status_key,
              std::string status_value, std::optional<std::string> error, SteadyTime end) &&;

 private:
  InferTrace(Tracer* tracer, const TraceContext& context, std::string_view model, SteadyTime received)
      : tracer_(tracer), trace_(context), model_(model), received_(received), parsed_(received) {}

  Tracer* tracer_;
  RequestTrace trace_;
  std::string model_;
  SteadyTime received_;
  SteadyTime parsed_;  // received_ until Parsed()
};

}  // namespace infera

#endif  // INFERA_TRACING_INFER_TRACE_H_
