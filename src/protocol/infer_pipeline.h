// InferPipeline: the one inference sequence of every tensor frontend — KServe infer over
// HTTP, Triton's generate / generate_stream, gRPC ModelInfer and ModelStreamInfer — written
// once and parameterised by the transport's decoder and responder (docs/life_of_a_request.md,
// "One pipeline"):
//
//   trace start → model name / version checked → lookup (unknown model: NotFound, before
//   anything is decoded) → decode (the transport's; InvalidArgument), then the parameters
//   every transport must type alike (binary_data_output, binary_data) → shared-memory bind
//   → resolve the version (a canary split routed by the request's key; an unknown or
//   unready version is reported here, after the decode) → ModelVersion::Infer → for each
//   response: shared-memory write → encode (the transport's) → send; trace finish with the
//   final one.
//
// The order of the checks is decided here, so both transports give the same class of
// error for the same request (tests/integration/test_error_parity.py).
//
// A transport supplies:
//   - an InferTarget: what it knows before decoding (model name and version, traceparent,
//     routing-key header, arrival time, cancellation token);
//   - an InferDecoder: its codec, body → InferRequest. A decoder that needs the model's
//     config to decode (a raw binary body, a generate body) chooses the version first
//     through the VersionResolver it is given;
//   - an InferResponder (one per request, owned by the pipeline until the final response):
//     Encode() one response into its wire form, Send() it or an error.
// A decoupled model's responses go to a responder that streams() one by one (final =
// false, then final); a unary responder gets exactly one (SingleResponse:
// manager/single_response.h).
//
// Cost: the pipeline allocates nothing of its own per request — its per-request state
// lives inside the responder (one allocation the transport makes), and the callback handed
// to ModelVersion::Infer holds just the responder's pointer (inline in the AnyInvocable).
//
// Thread-safety: Run() is thread-safe (an InferPipeline is immutable). Encode() and Send()
// are called on the thread that delivers each response (the caller's, for errors before the
// model and inline runs; a model worker or a decoupled model's thread otherwise), one call
// at a time per request.
#ifndef INFERA_PROTOCOL_INFER_PIPELINE_H_
#define INFERA_PROTOCOL_INFER_PIPELINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/cancellation.h"
#include "api/infer_request.h"
#include "api/token_meter.h"
#include "common/clock.h"
#include "manager/model_manager.h"
#include "manager/model_statistics.h"
#include "shm/shared_memory_binding.h"
#include "tracing/infer_trace.h"

namespace infera {

class CompletionBatch;

// What the transport knows about a request before its body is decoded.
struct InferTarget {
  std::string_view model_name;
  // The version asked for (unset: the version policy's), or why the transport could not
  // read it (InvalidArgument: reported after the trace starts, before the lookup).
  absl::StatusOr<std::optional<int64_t>> model_version = std::optional<int64_t>();
  std::optional<std::string_view> traceparent;     // W3C traceparent header / metadata
  std::optional<std::string_view> routing_header;  // X-Routing-Key header / x-routing-key metadata
  SteadyTime received{};                           // the request's arrival (end-to-end latency)
  std::shared_ptr<const CancellationToken> cancellation;  // may be null
  // Charged with the LLM tokens the request spends: the admitting API key's
  // (security/api_key_meter.h); null without API keys.
  std::shared_ptr<TokenMeter> token_meter{};
};

// Chooses the request's version for a decoder that needs the model's config to decode.
// Not thread-safe (one request's, during its decode).
class VersionResolver {
 public:
  // True when Resolve() routes a canary split by its key (else the key is ignored).
  bool needs_routing_key() const;
  // The transport's routing-key header (a decoder without parameters routes by it).
  std::optional<std::string_view> routing_header() const { return routing_header_; }
  // The version to serve, routed by `routing_key`, or the lookup's error (unknown version,
  // not ready). At most once per request; the pipeline keeps the version.
  absl::StatusOr<const ModelVersion*> Resolve(std::string_view routing_key);

 private:
  friend class InferPipeline;
  VersionResolver(VersionChoice* choice, ModelHandle* resolved, std::optional<std::string_view> routing_header)
      : choice_(choice), resolved_(resolved), routing_header_(routing_header) {}
  VersionChoice* choice_;
  ModelHandle* resolved_;
  std::optional<std::string_view> routing_header_;
  bool tried_ = false;  // Resolve() consumed the choice
};

// The transport's codec: the request body → an InferRequest (model name, version, arrival
// time and cancellation are the pipeline's to fill). Errors: InvalidArgument naming the
// problem (or the lookup's, when it resolved the version and that failed).
using InferDecoder = absl::FunctionRef<absl::StatusOr<InferRequest>(VersionResolver&)>;

// How one response or error leaves, besides the payload Encode() prepared.
struct InferSend {
  bool final = true;                 // the request's last call
  CompletionBatch* batch = nullptr;  // ResponseDelivery::batch: defer the hand-off to the batch's end
  // The serving version's frontend stage counters (null before the version is known): a
  // transport that measures its write records it here.
  const std::shared_ptr<ModelStatistics::FrontendStages>* stages = nullptr;
  std::string_view traceparent;  // the request's root span ("" when it is not traced)
  std::string_view trace_id;     // its trace id, for logs (traced requests, final call only)
  std::string_view request_id;   // the request's id ("" when none, or not decoded)
};

// The transport's side of one request's answers. One per request; the pipeline owns it
// (through the callback it hands the model) until the final Send.
class InferResponder {
 public:
  virtual ~InferResponder() = default;

  // True when it sends every response of a decoupled model as it comes (a stream); false:
  // a unary answer, which gets a decoupled model's only response (or an error).
  virtual bool streams() const { return false; }
  // Once the request is decoded and its version chosen, just before it runs.
  virtual void Prepare(const InferRequest& request) { (void)request; }
  // Encodes one successful response (shared-memory outputs already written); `final`:
  // the request's last. A decoupled model's empty final response (final, no outputs)
  // comes here too: a responder that has nothing to send for it remembers that. Errors
  // fail the request with that status (a non-final response's error is the final one).
  virtual absl::Status Encode(InferResponse& response, bool final) = 0;
  // Sends what Encode() prepared, or `status` when it is not OK (the request failed, then
  // `send.final` is true). Called once per response; after the final call, never again.
  virtual void Send(const absl::Status& status, const InferSend& send) = 0;

 private:
  friend class InferPipeline;
  // What the pipeline keeps between the request and its answers (see "Cost" above): the
  // answers need nothing else, so a request never depends on the pipeline object.
  struct PipelineState {
    std::string_view protocol;          // InferPipeline::Transport's (static strings)
    std::string_view status_attribute;
    std::string (*status_value)(const absl::Status&) = nullptr;
    std::optional<InferTrace> trace;
    std::string traceparent;  // the trace's, set when it starts
    SharedMemoryOutputs shared_memory;
    std::shared_ptr<ModelStatistics::FrontendStages> stages;
    std::string request_id;
    bool finished = false;  // the final Send happened
  };
  PipelineState pipeline_;
};

class InferPipeline {
 public:
  // How a transport's answers show in a trace: infera.protocol ("http", "grpc") and its
  // status attribute (http.status_code, rpc.grpc.status_code) for a status.
  struct Transport {
    std::string_view protocol;
    std::string_view status_attribute;
    std::string (*status_value)(const absl::Status& status) = nullptr;
  };
  struct Options {
    Transport transport;
    InferTrace::Sink trace;  // both null: tracing off
    // Regions inputs and outputs may name; null: none (a request naming one fails).
    const SharedMemoryRegistry* shared_memory = nullptr;
  };

  // `manager` outlives the pipeline and its requests (the pipeline itself need not: a
  // request in flight holds nothing of it). `options.transport`'s strings are static.
  InferPipeline(const ModelManager& manager, Options options) : manager_(&manager), options_(options) {}

  // Runs one request through the sequence above. Every outcome reaches `responder`:
  // synchronously for a request that fails before its model runs (or that runs inline),
  // else from the thread that completes it.
  void Run(const InferTarget& target, InferDecoder decode, std::unique_ptr<InferResponder> responder) const;

 private:
  // One of the model's answers (ResponseDelivery semantics, api/infer_request.h).
  static void Deliver(InferResponder& responder, absl::StatusOr<InferResponse> result, ResponseDelivery delivery);
  // The final Send: finishes the trace first (its traceparent goes with the answer). Also
  // how a request that failed before its model got it is answered.
  static void SendFinal(InferResponder& responder, const absl::Status& status, CompletionBatch* batch);

  const ModelManager* manager_;
  Options options_;
};

}  // namespace infera

#endif  // INFERA_PROTOCOL_INFER_PIPELINE_H_
