// RunModelInfer: one KServe gRPC inference through infera's single core path.
//
//   ModelInferRequest --DecodeModelInferRequest--> InferRequest
//     --ModelManager::GetModelVersion--> ModelVersion::Infer (validate, queue, run)
//     --> InferResponse --EncodeModelInferResponse--> ModelInferResponse
//
// exactly the path HTTP takes (http/kserve_routes.cc), with the gRPC codec in place of
// the JSON one. Used by the unary ModelInfer reactor and by the ModelStreamInfer stream.
//
// Thread-safe. `done` is called exactly once: synchronously for a request that fails
// before it is queued, else later on a model worker thread; it must not block.
#ifndef INFERA_GRPC_INFER_CALL_H_
#define INFERA_GRPC_INFER_CALL_H_

#include <cstdint>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "api/cancellation.h"
#include "grpc_service.pb.h"
#include "manager/model_manager.h"
#include "shm/shared_memory_registry.h"

namespace infera {

struct InferCallOptions {
  // A response whose encoded size exceeds this fails with ResourceExhausted naming the
  // --grpc-max-message-bytes flag (instead of gRPC failing the whole call opaquely).
  uint64_t max_response_bytes = 64ull << 20;
  // Regions that inputs / outputs may name (shm/shared_memory_binding.h); null: none.
  // Not owned; outlives every call. The shared-memory RPCs register into it.
  SharedMemoryRegistry* shared_memory = nullptr;
};

// Fills `*response` and then calls `done` with OK, or calls `done` with the error.
// `message` must stay valid until this returns; `owner`, when set, keeps it alive
// for zero-copy raw inputs (see DecodeModelInferRequest). `response` must stay valid
// until `done` runs. `cancellation` may be null.
void RunModelInfer(const ModelManager& manager, const inference::ModelInferRequest& message,
                   std::shared_ptr<const void> owner,
                   std::shared_ptr<const CancellationToken> cancellation,
                   const InferCallOptions& options, inference::ModelInferResponse* response,
                   absl::AnyInvocable<void(absl::Status)> done);

}  // namespace infera

#endif  // INFERA_GRPC_INFER_CALL_H_
