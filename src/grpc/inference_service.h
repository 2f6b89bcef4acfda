// InferenceService: inference.GRPCInferenceService — every RPC on gRPC's async
// completion-queue API, served by the --grpc-infer-threads queue threads
// (infer_cq_threads.h). ModelInfer and ModelStreamInfer are raw async methods
// (async_infer_context.h AsyncInferService) run by UnaryInferCall / StreamInferCall; the
// 17 control-plane RPCs are typed async methods (async_unary_call.h) whose handlers are
// here: Methods() lists them for the queue threads.
//
// Metadata, health and extension RPCs are answered inline on the queue thread by
// MetadataHandlers; RepositoryModelLoad/Unload run on the AdminExecutor and finish from
// its worker.
//
// Thread-safe. The manager and handlers must outlive the grpc::Server serving this.
#ifndef INFERA_GRPC_INFERENCE_SERVICE_H_
#define INFERA_GRPC_INFERENCE_SERVICE_H_

#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "grpc/async_infer_context.h"
#include "grpc/async_unary_call.h"
#include "grpc/live_calls.h"
#include "grpc/metadata_handlers.h"
#include "grpc_service.grpc.pb.h"
#include "shm/shared_memory_registry.h"
#include "absl/functional/function_ref.h"
#include "api/admin_guard.h"
#include "security/audit_log.h"
#include "manager/admin_executor.h"
#include "manager/model_manager.h"
#include "security/api_key_store.h"

namespace infera {

class InferenceService final {
 public:
  // `admin` runs RepositoryModelLoad/Unload; it and `manager` outlive this.
  // `shared_memory` (may be null) is where the shared-memory RPCs register regions.
  InferenceService(ModelManager& manager, const MetadataHandlers& handlers, AdminExecutor& admin,
                   SharedMemoryRegistry* shared_memory, AdminGuard guard, ApiKeyStore* api_keys = nullptr);

  // The 17 control-plane methods (every RPC but ModelInfer / ModelStreamInfer), each
  // calling its handler below; every matched call is counted in `live_calls`. The
  // methods must outlive the queue threads; this service and `live_calls` outlive them.
  std::vector<std::unique_ptr<AsyncMethod>> Methods(LiveCalls* live_calls);

  // The gRPC service to register with the server builder and to request calls from.
  AsyncInferService& service() { return service_; }
  // This transport's guard (the infer calls check the `inference` category with it).
  const AdminGuard& guard() const { return guard_; }

 private:
  using Context = grpc::ServerContext;

  absl::Status ServerLive(Context&, const inference::ServerLiveRequest&, inference::ServerLiveResponse*) const;
  absl::Status ServerReady(Context&, const inference::ServerReadyRequest&,
                           inference::ServerReadyResponse*) const;
  absl::Status ModelReady(Context&, const inference::ModelReadyRequest&, inference::ModelReadyResponse*) const;
  absl::Status ServerMetadata(Context&, const inference::ServerMetadataRequest&,
                              inference::ServerMetadataResponse*) const;
  absl::Status ModelMetadata(Context&, const inference::ModelMetadataRequest&,
                             inference::ModelMetadataResponse*) const;
  absl::Status ModelConfig(Context&, const inference::ModelConfigRequest&, inference::ModelConfigResponse*) const;
  absl::Status ModelStatistics(Context&, const inference::ModelStatisticsRequest&,
                               inference::ModelStatisticsResponse*) const;
  absl::Status RepositoryIndex(Context&, const inference::RepositoryIndexRequest&,
                               inference::RepositoryIndexResponse*) const;
  // Triton's model repository extension. The call answers when the model has loaded or
  // drained (as Triton's does), but the work runs on the AdminExecutor, whose worker
  // then finishes the call, so the queue threads stay free for inference;
  // RESOURCE_EXHAUSTED when its queue is full, UNAVAILABLE once the server is shutting down.
  void RepositoryModelLoad(Context&, const inference::RepositoryModelLoadRequest&,
                           inference::RepositoryModelLoadResponse*, UnaryReply reply) const;
  void RepositoryModelUnload(Context&, const inference::RepositoryModelUnloadRequest&,
                             inference::RepositoryModelUnloadResponse*, UnaryReply reply) const;
  // Triton's trace extension: settings read (no settings in the request) or changed,
  // behind the admin guard's trace category (a change is an admin operation).
  absl::Status TraceSetting(Context&, const inference::TraceSettingRequest&,
                            inference::TraceSettingResponse*) const;
  // The logging extension (protocol/log_settings.h); reading and updating alike are in
  // the admin guard's logging category as an admin operation, as GET/POST /v2/logging are.
  absl::Status LogSettings(Context&, const inference::LogSettingsRequest&, inference::LogSettingsResponse*) const;
  // Triton's shared-memory extensions (grpc/shared_memory_handlers.h), on `shared_memory`.
  absl::Status SystemSharedMemoryStatus(Context&, const inference::SystemSharedMemoryStatusRequest&,
                                        inference::SystemSharedMemoryStatusResponse*) const;
  absl::Status SystemSharedMemoryRegister(Context&, const inference::SystemSharedMemoryRegisterRequest&,
                                          inference::SystemSharedMemoryRegisterResponse*) const;
  absl::Status SystemSharedMemoryUnregister(Context&, const inference::SystemSharedMemoryUnregisterRequest&,
                                            inference::SystemSharedMemoryUnregisterResponse*) const;
  absl::Status CudaSharedMemoryStatus(Context&, const inference::CudaSharedMemoryStatusRequest&,
                                      inference::CudaSharedMemoryStatusResponse*) const;
  absl::Status CudaSharedMemoryRegister(Context&, const inference::CudaSharedMemoryRegisterRequest&,
                                        inference::CudaSharedMemoryRegisterResponse*) const;
  absl::Status CudaSharedMemoryUnregister(Context&, const inference::CudaSharedMemoryUnregisterRequest&,
                                          inference::CudaSharedMemoryUnregisterResponse*) const;

  // Runs `work` on the admin executor; `reply` answers with its status, from the
  // executor's worker (or at once when the executor refuses the job).
  // `audit` is written with the work's outcome.
  void FinishWhenDone(UnaryReply reply, AuditEvent audit, absl::AnyInvocable<absl::Status() &&> work) const;
  // FailedPrecondition outside explicit mode, else the guard's verdict on the call's
  // metadata (model-repository category, an admin operation); a refusal is audited.
  absl::Status CheckModelControl(const Context& context, std::string_view action, std::string_view model) const;
  // The guard's verdict on the call's metadata for `category`; a refusal is audited as
  // `action` on `target` (grpc/admin_audit.h).
  absl::Status CheckGuard(const Context& context, ApiCategory category, AdminGuard::Operation operation,
                          std::string_view action, std::string_view target) const;
  // The audit event of this call (security/audit_log.h); the outcome is still to be set.
  AuditEvent Audit(const Context& context, ApiCategory category, std::string_view action,
                   std::string_view target) const;
  // Checks a shared-memory register / unregister, runs `change`, audits its outcome.
  absl::Status AuditedSharedMemory(const Context& context, AdminGuard::Operation operation, std::string_view action,
                                   const std::string& region, absl::FunctionRef<absl::Status()> change) const;

  ModelManager& manager_;
  const MetadataHandlers& handlers_;
  AdminExecutor& admin_;
  SharedMemoryRegistry* const shared_memory_;
  const AdminGuard guard_;
  ApiKeyStore* const api_keys_;  // null: keys off (grpc/api_key_check.h)
  AsyncInferService service_;
};

}  // namespace infera

#endif  // INFERA_GRPC_INFERENCE_SERVICE_H_
