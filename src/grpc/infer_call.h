// RunModelInfer: one KServe gRPC inference through infera's single core path.
//
//   ModelInferRequest --DecodeModelInferRequest--> InferRequest
//     --ModelManager::GetModelVersion--> ModelVersion::Infer (validate, queue, run)
//     --> InferResponse --SerializeInferResponse--> grpc::ByteBuffer
//
// exactly the path HTTP takes (http/kserve_routes.cc), with the gRPC codec in place of
// the JSON one. Used by the unary ModelInfer call and by the ModelStreamInfer stream
// (unary_infer_call.h, stream_infer_call.h). The answer is serialised here, on the thread
// that completes the request, without copying large outputs (infer_response_serializer.h);
// that time is the encode stage (FrontendStages) and the trace's serialize span.
// Also shared with HTTP: the canary routing key (protocol/model_answers.h RoutingKey: the
// `routing_key` request parameter, else the call's `x-routing-key` metadata) and the
// trace (tracing/infer_trace.h InferTrace: the call's `traceparent` metadata, stages
// parse, queue, compute, serialize; root attribute rpc.grpc.status_code).
//
// Thread-safe. `done` is called exactly once: synchronously for a request that fails
// before it is queued or that its model runs inline, else later on a model worker
// thread; it must not block. The request's model-version handle is held until the
// request is in the version's scheduler (as HTTP): the scheduler's drain, not a handle,
// keeps the version serving until the answer is handed over.
#ifndef INFERA_GRPC_INFER_CALL_H_
#define INFERA_GRPC_INFER_CALL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "api/cancellation.h"
#include "grpc/infer_response_serializer.h"
#include "grpc_service.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "manager/model_manager.h"
#include "tracing/infer_trace.h"
#include "shm/shared_memory_registry.h"

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

// What RunModelInfer hands to `done`.
struct InferCallResult {
  absl::Status status;
  // The serialised answer (framed as asked) when `status` is OK.
  grpc::ByteBuffer message;
  // The traceparent naming the request's root span when it is traced ("" otherwise),
  // for the unary call's response metadata.
  std::string traceparent;
};

// Runs one request and calls `done` with the serialised answer or the error.
// `message` must stay valid until this returns; `owner`, when set, keeps it alive
// for zero-copy raw inputs (see DecodeModelInferRequest). `cancellation` may be null.
void RunModelInfer(const ModelManager& manager, const inference::ModelInferRequest& message,
                   std::shared_ptr<const void> owner,
                   std::shared_ptr<const CancellationToken> cancellation,
                   const InferCallOptions& options, const InferCallMetadata& metadata,
                   ResponseFraming framing, absl::AnyInvocable<void(InferCallResult) &&> done);

}  // namespace infera

#endif  // INFERA_GRPC_INFER_CALL_H_
