// The gRPC transport's part of the one inference pipeline (protocol/infer_pipeline.h):
// what a ModelInfer call, or one request of a ModelStreamInfer stream, gives the pipeline.
//
//   ModelInferRequest ──InferTarget (model_name, model_version, the call's traceparent /
//   x-routing-key metadata)──> InferPipeline::Run (lookup, then DecodeModelInferRequest,
//   shared memory, canary routing, ModelVersion::Infer) ──> the responder:
//     UnaryInferResponder   one answer, serialised here on the thread that completes the
//                           request (infer_response_serializer.h, no copy of large outputs)
//     StreamInferResponder  one ModelStreamInferResponse per response of the model (a
//                           decoupled model's several), each with Triton's
//                           `triton_final_response` parameter; a decoupled model's empty
//                           final response is sent only when the request asked for it
//                           (`triton_enable_empty_final_response: true`); an error is an
//                           in-band `error_message` answer naming the request
// so HTTP and gRPC share the sequence and its error order; only the codec and the answer
// differ. The serialising time is the encode stage (FrontendStages) and the trace's
// serialize span; the trace's status attribute is rpc.grpc.status_code.
//
// Thread-safe. The responders' callbacks are called on the thread that completes each
// response (the calling thread for a request that fails before its model or runs inline),
// one at a time per request, and must not block.
#ifndef INFERA_GRPC_INFER_CALL_H_
#define INFERA_GRPC_INFER_CALL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "api/cancellation.h"
#include "api/token_meter.h"
#include "grpc/infer_response_serializer.h"
#include "grpc_service.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "manager/model_manager.h"
#include "protocol/infer_pipeline.h"
#include "shm/shared_memory_registry.h"
#include "tracing/infer_trace.h"

namespace infera {

struct InferCallOptions {
  // A response whose encoded size exceeds this fails with ResourceExhausted naming the
  // --grpc-max-message-bytes flag (instead of gRPC failing the whole call opaquely).
  uint64_t max_response_bytes = 64ull << 20;
  // Where sampled requests are traced (both null: tracing off).
  InferTrace::Sink trace;
  // Regions that inputs / outputs may name (shm/shared_memory_binding.h); null: none.
  // Not owned; outlives every call. The shared-memory RPCs register into it.
  SharedMemoryRegistry* shared_memory = nullptr;
};

// What a call's client metadata says about every request it carries (a stream's
// metadata applies to each of its requests).
struct InferCallMetadata {
  std::optional<std::string> traceparent;  // W3C `traceparent`
  std::optional<std::string> routing_key;  // `x-routing-key`
  // The admitting API key's meter (security/api_key_meter.h); null without API keys.
  std::shared_ptr<TokenMeter> token_meter{};

  // Reads both from gRPC client metadata (a multimap of lower-case keys).
  template <typename Multimap>
  static InferCallMetadata From(const Multimap& metadata) {
    InferCallMetadata out;
    if (auto it = metadata.find("traceparent"); it != metadata.end()) {
      out.traceparent.emplace(it->second.data(), it->second.size());
    }
    if (auto it = metadata.find("x-routing-key"); it != metadata.end()) {
      out.routing_key.emplace(it->second.data(), it->second.size());
    }
    return out;
  }
};

// The unary call's answer.
struct InferCallResult {
  absl::Status status;
  // The serialised ModelInferResponse when `status` is OK.
  grpc::ByteBuffer message;
  // The traceparent naming the request's root span when it is traced ("" otherwise),
  // for the call's response metadata.
  std::string traceparent;
};

// One stream answer: a serialised ModelStreamInferResponse, or none (a decoupled model's
// empty final response the client did not ask for); `final` ends its request.
struct StreamAnswer {
  std::optional<grpc::ByteBuffer> message;
  bool final = true;
};

// The request parameter that asks for a decoupled model's empty final responses
// (Triton's), and the response parameter that marks a request's last answer.
inline constexpr char kEnableEmptyFinalResponse[] = "triton_enable_empty_final_response";
inline constexpr char kFinalResponseParameter[] = "triton_final_response";

// Runs one ModelInfer call; `done` gets its answer exactly once. `message` must stay valid
// until this returns; `owner`, when set, keeps it alive for zero-copy raw inputs (see
// DecodeModelInferRequest). `cancellation` may be null.
void RunUnaryInfer(const ModelManager& manager, const InferCallOptions& options, const InferCallMetadata& metadata,
                   const inference::ModelInferRequest& message, std::shared_ptr<const void> owner,
                   std::shared_ptr<const CancellationToken> cancellation,
                   absl::AnyInvocable<void(InferCallResult) &&> done);

// Runs one request of a stream; `answer` gets each of its answers, the last with `final`
// set. `message` is kept (its id, model name and version name the request in error
// answers) and its raw inputs are zero-copy views into it.
void RunStreamInfer(const ModelManager& manager, const InferCallOptions& options, const InferCallMetadata& metadata,
                    std::shared_ptr<const inference::ModelInferRequest> message,
                    std::shared_ptr<const CancellationToken> cancellation,
                    absl::AnyInvocable<void(StreamAnswer)> answer);

// The in-band answer to a stream request that failed: `error_message`, and an
// `infer_response` with only the request's model name, version, id and
// triton_final_response: true.
grpc::ByteBuffer StreamErrorAnswer(const inference::ModelInferRequest& request, const absl::Status& status);

}  // namespace infera

#endif  // INFERA_GRPC_INFER_CALL_H_
