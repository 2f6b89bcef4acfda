// InferenceService: inference.GRPCInferenceService — the control-plane RPCs on the gRPC
// callback API; ModelInfer and ModelStreamInfer are raw async methods
// (async_infer_context.h AsyncInferService), served on completion queues by
// InferCqThreads with UnaryInferCall / StreamInferCall, not here.
//
// Metadata, health and extension RPCs are answered inline by MetadataHandlers.
//
// Thread-safe. The manager and handlers must outlive the grpc::Server serving this.
#ifndef INFERA_GRPC_INFERENCE_SERVICE_H_
#define INFERA_GRPC_INFERENCE_SERVICE_H_

#include "grpc/async_infer_context.h"
#include "grpc/metadata_handlers.h"
#include "grpc_service.grpc.pb.h"
#include "shm/shared_memory_registry.h"
#include "api/admin_guard.h"
#include "manager/admin_executor.h"
#include "manager/model_manager.h"

namespace infera {

class InferenceService final : public AsyncInferService {
 public:
  // `admin` runs RepositoryModelLoad/Unload; it and `manager` outlive this.
  // `shared_memory` (may be null) is where the shared-memory RPCs register regions.
  InferenceService(ModelManager& manager, const MetadataHandlers& handlers, AdminExecutor& admin,
                   SharedMemoryRegistry* shared_memory, AdminGuard guard);

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* context,
                                        const inference::ModelConfigRequest* request,
                                        inference::ModelConfigResponse* response) override;
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* context,
                                            const inference::ModelStatisticsRequest* request,
                                            inference::ModelStatisticsResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* context,
                                            const inference::RepositoryIndexRequest* request,
                                            inference::RepositoryIndexResponse* response) override;
  // Triton's model repository extension. The call answers when the model has loaded or
  // drained (as Triton's does), but the work runs on the AdminExecutor, so callback
  // threads stay free for inference; RESOURCE_EXHAUSTED when its queue is full,
  // UNAVAILABLE once the server is shutting down.
  grpc::ServerUnaryReactor* RepositoryModelLoad(grpc::CallbackServerContext* context,
                                                const inference::RepositoryModelLoadRequest* request,
                                                inference::RepositoryModelLoadResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(grpc::CallbackServerContext* context,
                                                  const inference::RepositoryModelUnloadRequest* request,
                                                  inference::RepositoryModelUnloadResponse* response) override;
  // Triton's trace extension: settings read (no settings in the request) or changed,
  // behind the admin guard's trace category (a change is an admin operation).
  grpc::ServerUnaryReactor* TraceSetting(grpc::CallbackServerContext* context,
                                         const inference::TraceSettingRequest* request,
                                         inference::TraceSettingResponse* response) override;
  // The logging extension (protocol/log_settings.h); reading and updating alike are in
  // the admin guard's logging category as an admin operation, as GET/POST /v2/logging are.
  grpc::ServerUnaryReactor* LogSettings(grpc::CallbackServerContext* context,
                                        const inference::LogSettingsRequest* request,
                                        inference::LogSettingsResponse* response) override;

  // Triton's shared-memory extensions (grpc/shared_memory_handlers.h), on `shared_memory`.
  grpc::ServerUnaryReactor* SystemSharedMemoryStatus(
      grpc::CallbackServerContext* context, const inference::SystemSharedMemoryStatusRequest* request,
      inference::SystemSharedMemoryStatusResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryRegister(
      grpc::CallbackServerContext* context, const inference::SystemSharedMemoryRegisterRequest* request,
      inference::SystemSharedMemoryRegisterResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryUnregister(
      grpc::CallbackServerContext* context, const inference::SystemSharedMemoryUnregisterRequest* request,
      inference::SystemSharedMemoryUnregisterResponse* response) override;
  grpc::ServerUnaryReactor* CudaSharedMemoryStatus(
      grpc::CallbackServerContext* context, const inference::CudaSharedMemoryStatusRequest* request,
      inference::CudaSharedMemoryStatusResponse* response) override;
  grpc::ServerUnaryReactor* CudaSharedMemoryRegister(
      grpc::CallbackServerContext* context, const inference::CudaSharedMemoryRegisterRequest* request,
      inference::CudaSharedMemoryRegisterResponse* response) override;
  grpc::ServerUnaryReactor* CudaSharedMemoryUnregister(
      grpc::CallbackServerContext* context, const inference::CudaSharedMemoryUnregisterRequest* request,
      inference::CudaSharedMemoryUnregisterResponse* response) override;

 private:
  // Runs `work` on the admin executor; the call finishes with its status.
  grpc::ServerUnaryReactor* FinishWhenDone(grpc::CallbackServerContext* context,
                                           absl::AnyInvocable<absl::Status() &&> work);
  // FailedPrecondition outside explicit mode, else the guard's verdict on the call's
  // metadata (model-repository category, `operation`).
  absl::Status CheckAdmin(grpc::CallbackServerContext* context,
                          AdminGuard::Operation operation = AdminGuard::Operation::kAdmin) const;
  // The guard's verdict on the call's metadata for `category`.
  absl::Status CheckGuard(grpc::CallbackServerContext* context, ApiCategory category,
                          AdminGuard::Operation operation) const;

  ModelManager& manager_;
  const MetadataHandlers& handlers_;
  AdminExecutor& admin_;
  SharedMemoryRegistry* const shared_memory_;
  const AdminGuard guard_;
};

}  // namespace infera

#endif  // INFERA_GRPC_INFERENCE_SERVICE_H_
