#include "grpc/infer_call.h"

#include "common/str_cat.h"
#include "grpc/infer_message_codec.h"
#include "shm/shared_memory_binding.h"

namespace infera {

void RunModelInfer(const ModelManager& manager, const inference::ModelInferRequest& message,
                   std::shared_ptr<const void> owner,
                   std::shared_ptr<const CancellationToken> cancellation,
                   const InferCallOptions& options, inference::ModelInferResponse* response,
                   absl::AnyInvocable<void(absl::Status)> done) {
  absl::StatusOr<InferRequest> request = DecodeModelInferRequest(message, std::move(owner));
  if (!request.ok()) return done(request.status());
  absl::StatusOr<SharedMemoryOutputs> shm = BindSharedMemory(options.shared_memory, *request);
  if (!shm.ok()) return done(shm.status());
  auto model = manager.GetModelVersion(request->model_name, request->model_version);
  if (!model.ok()) return done(model.status());
  request->cancellation = std::move(cancellation);
  const OutputContents contents = OutputContentsFor(message);
  const uint64_t limit = options.max_response_bytes;
  (*model)->Infer(std::move(*request), [response, contents, limit, shm = *std::move(shm),
                                        done = std::move(done)](
                                           absl::StatusOr<InferResponse> result) mutable {
    if (!result.ok()) return done(result.status());
    if (absl::Status written = shm.WriteInto(*result); !written.ok()) return done(written);
    absl::Status encoded = EncodeModelInferResponse(*result, contents, response);
    if (encoded.ok() && response->ByteSizeLong() > limit) {
      encoded = absl::ResourceExhaustedError(
          StrCat("response of ", response->ByteSizeLong(), " bytes exceeds the ", limit,
                 "-byte gRPC message limit (--grpc-max-message-bytes)"));
      response->Clear();
    }
    done(std::move(encoded));
  });
}

}  // namespace infera
