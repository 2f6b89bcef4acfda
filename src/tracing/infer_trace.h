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
// In trace mode "triton" the same points become Triton's timestamps, written by the
// TraceFileWriter (no spans, no traceparent in the answer):
//   HTTP_RECV_START, HTTP_RECV_END     received (infera stamps once, the body read)
//   (GRPC_WAITREAD_START / _END for gRPC)
//   REQUEST_START                      decoded
//   QUEUE_START                        entered the scheduler (a generation: queued)
//   COMPUTE_START, COMPUTE_INPUT_END   its batch started (no separate input copy)
//   COMPUTE_OUTPUT_START, COMPUTE_END  its batch ended (no separate output copy)
//   REQUEST_END                        encoding the answer began
//   HTTP_SEND_START                    encoding ended
//   HTTP_SEND_END                      the answer handed to the transport
//   (GRPC_SEND_START / _END for gRPC)
// A point the request never reached (refused before it ran) is left out. Level TENSORS
// adds the inputs (TENSOR_QUEUE_INPUT) and outputs (TENSOR_BACKEND_OUTPUT).
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
#include "tracing/trace_file_writer.h"
#include "tracing/trace_settings.h"
#include "tracing/tracer.h"

namespace infera {

class InferTrace {
 public:
  // Where traced requests go, outliving requests: settings null, tracing off; the
  // tracer for trace mode opentelemetry, the file writer for trace mode triton.
  struct Sink {
    TraceSettings* settings = nullptr;
    Tracer* tracer = nullptr;
    TraceFileWriter* file = nullptr;
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
  void Serialized(SteadyTime start, SteadyTime end);

  // Triton mode: the version that answered (Triton's model_version).
  void Answered(int64_t model_version) {
    if (triton_) triton_->model_version = model_version;
  }
  // Triton mode, level TENSORS: whether Input / Output record anything.
  bool wants_tensors() const { return triton_.has_value() && tensors_; }
  void Input(const Tensor& tensor) {
    if (wants_tensors()) triton_->tensors.push_back({"TENSOR_QUEUE_INPUT", tensor});
  }
  void Output(const Tensor& tensor) {
    if (wants_tensors()) triton_->tensors.push_back({"TENSOR_BACKEND_OUTPUT", tensor});
  }

  std::string trace_id() const { return ToHex(trace_.trace_id()); }
  // The traceparent naming our root span (for the response's headers / metadata); ""
  // in trace mode triton (Triton sends none).
  std::string traceparent() const { return triton_ ? std::string() : trace_.traceparent(); }

  // Closes the root span at `end` and hands every span to the tracer.
  // `status_key` / `status_value`: the transport's status attribute; `error` set for a
  // failed request.
  void Finish(std::string_view protocol, std::string_view request_id, std::string_view status_key,
              std::string status_value, std::optional<std::string> error, SteadyTime end) &&;

 private:
  InferTrace(Tracer* tracer, const TraceContext& context, std::string_view model, SteadyTime received)
      : tracer_(tracer), trace_(context), model_(model), received_(received), parsed_(received) {}

  // Triton mode: the record's timestamps, by the transport's names.
  void AddTritonTimestamps(std::string_view protocol, SteadyTime end);

  Tracer* tracer_;
  RequestTrace trace_;
  std::string model_;
  SteadyTime received_;
  SteadyTime parsed_;  // received_ until Parsed()
  // Trace mode triton: the record being built, and what it holds.
  TraceFileWriter* file_ = nullptr;
  std::optional<TritonTraceRecord> triton_;
  bool timestamps_ = true;
  bool tensors_ = false;
  std::optional<RequestTimings> ran_;  // queue and compute points (Ran or a generation's)
  SteadyTime serialize_start_{};       // the first encoding's start ({}: none)
  SteadyTime serialize_end_{};         // the last encoding's end
};

}  // namespace infera

#endif  // INFERA_TRACING_INFER_TRACE_H_
