#include "grpc/inference_service.h"

#include <memory>

#include "common/logging.h"
#include "common/status.h"
#include "grpc/grpc_status.h"
#include "protocol/log_settings.h"
#include "protocol/model_answers.h"
#include "grpc/shared_memory_handlers.h"

namespace infera {
namespace {

// Answers a call at once with `status`.
grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* context,
                                    const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

InferenceService::InferenceService(ModelManager& manager, const MetadataHandlers& handlers,
                                   AdminExecutor& admin, SharedMemoryRegistry* shared_memory,
                                   AdminGuard guard)
    : manager_(manager), handlers_(handlers), admin_(admin), shared_memory_(shared_memory),
      guard_(std::move(guard)) {}

grpc::ServerUnaryReactor* InferenceService::ServerLive(grpc::CallbackServerContext* context,
                                                       const inference::ServerLiveRequest*,
                                                       inference::ServerLiveResponse* response) {
  response->set_live(true);
  return FinishNow(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ServerReady(grpc::CallbackServerContext* context,
                                                        const inference::ServerReadyRequest*,
                                                        inference::ServerReadyResponse* response) {
  response->set_ready(handlers_.ServerReady());
  return FinishNow(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ModelReady(grpc::CallbackServerContext* context,
                                                       const inference::ModelReadyRequest* request,
                                                       inference::ModelReadyResponse* response) {
  return FinishNow(context, handlers_.ModelReady(*request, response));
}

grpc::ServerUnaryReactor* InferenceService::ServerMetadata(
    grpc::CallbackServerContext* context, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* response) {
  handlers_.ServerMetadata(response);
  return FinishNow(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  return FinishNow(context, handlers_.ModelMetadata(*request, response));
}

grpc::ServerUnaryReactor* InferenceService::ModelConfig(
    grpc::CallbackServerContext* context, const inference::ModelConfigRequest* request,
    inference::ModelConfigResponse* response) {
  return FinishNow(context, handlers_.ModelConfig(*request, response));
}

grpc::ServerUnaryReactor* InferenceService::ModelStatistics(
    grpc::CallbackServerContext* context, const inference::ModelStatisticsRequest* request,
    inference::ModelStatisticsResponse* response) {
  return FinishNow(context, handlers_.ModelStatistics(*request, response));
}

grpc::ServerUnaryReactor* InferenceService::RepositoryIndex(
    grpc::CallbackServerContext* context, const inference::RepositoryIndexRequest* request,
    inference::RepositoryIndexResponse* response) {
  if (absl::Status denied = CheckAdmin(context, AdminGuard::Operation::kRead); !denied.ok()) {
    return FinishNow(context, denied);
  }
  handlers_.RepositoryIndex(*request, response);
  return FinishNow(context, absl::OkStatus());
}

absl::Status InferenceService::CheckAdmin(grpc::CallbackServerContext* context,
                                          AdminGuard::Operation operation) const {
  if (operation == AdminGuard::Operation::kAdmin) RETURN_IF_ERROR(CheckExplicitModelControl(manager_));
  return CheckGuard(context, ApiCategory::kModelRepository, operation);
}

absl::Status InferenceService::CheckGuard(grpc::CallbackServerContext* context, ApiCategory category,
                                          AdminGuard::Operation operation) const {
  const auto& metadata = context->client_metadata();
  return guard_.Check(category, operation,
                      [&metadata](std::string_view name) -> std::optional<std::string_view> {
                        auto it = metadata.find(grpc::string_ref(name.data(), name.size()));
                        if (it == metadata.end()) return std::nullopt;
                        return std::string_view(it->second.data(), it->second.size());
                      });
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelLoad(
    grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
    inference::RepositoryModelLoadResponse*) {
  if (absl::Status admin = CheckAdmin(context); !admin.ok()) return FinishNow(context, admin);
  std::optional<inference::ModelConfig> override;
  auto config = request->parameters().find("config");
  if (config != request->parameters().end()) {
    if (!config->second.has_string_param()) {
      return FinishNow(context, absl::InvalidArgumentError("parameter 'config' must be a string_param (JSON)"));
    }
    absl::StatusOr<inference::ModelConfig> parsed =
        ParseConfigOverride(config->second.string_param(), "parameter 'config'");
    if (!parsed.ok()) return FinishNow(context, parsed.status());
    override = std::move(*parsed);
  }
  return FinishWhenDone(context, [this, name = request->model_name(), override = std::move(override)]() mutable {
    return manager_.LoadModel(name, std::move(override));
  });
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelUnload(
    grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
    inference::RepositoryModelUnloadResponse*) {
  if (absl::Status admin = CheckAdmin(context); !admin.ok()) return FinishNow(context, admin);
  return FinishWhenDone(context, [this, name = request->model_name()] { return manager_.UnloadModel(name); });
}

grpc::ServerUnaryReactor* InferenceService::TraceSetting(grpc::CallbackServerContext* context,
                                                         const inference::TraceSettingRequest* request,
                                                         inference::TraceSettingResponse* response) {
  // Reading is a request without settings; anything else changes them.
  const AdminGuard::Operation operation =
      request->settings().empty() ? AdminGuard::Operation::kRead : AdminGuard::Operation::kAdmin;
  if (absl::Status denied = CheckGuard(context, ApiCategory::kTrace, operation); !denied.ok()) {
    return FinishNow(context, denied);
  }
  return FinishNow(context, handlers_.TraceSetting(*request, response));
}

grpc::ServerUnaryReactor* InferenceService::LogSettings(grpc::CallbackServerContext* context,
                                                        const inference::LogSettingsRequest* request,
                                                        inference::LogSettingsResponse* response) {
  // Reading is guarded too, as over HTTP: with --admin-token the whole extension is admin.
  if (absl::Status denied = CheckGuard(context, ApiCategory::kLogging, AdminGuard::Operation::kAdmin);
      !denied.ok()) {
    return FinishNow(context, denied);
  }
  return FinishNow(context, BuildLogSettings(*request, response));
}

grpc::ServerUnaryReactor* InferenceService::FinishWhenDone(grpc::CallbackServerContext* context,
                                                           absl::AnyInvocable<absl::Status() &&> work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // The reactor stays valid until Finish (gRPC waits for it, even at shutdown), which
  // the executor's done callback calls exactly once.
  admin_.Submit({std::move(work), [reactor](absl::Status status) { reactor->Finish(ToGrpcStatus(status)); }});
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryStatus(
    grpc::CallbackServerContext* context, const inference::SystemSharedMemoryStatusRequest* request,
    inference::SystemSharedMemoryStatusResponse* response) {
  absl::Status status = CheckSharedMemoryAccess(guard_, AdminGuard::Operation::kRead, *context);
  if (status.ok()) status = infera::SystemSharedMemoryStatus(shared_memory_, *request, response);
  return FinishNow(context, status);
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryRegister(
    grpc::CallbackServerContext* context, const inference::SystemSharedMemoryRegisterRequest* request,
    inference::SystemSharedMemoryRegisterResponse*) {
  absl::Status status = CheckSharedMemoryAccess(guard_, AdminGuard::Operation::kAdmin, *context);
  if (status.ok()) status = infera::SystemSharedMemoryRegister(shared_memory_, *request);
  return FinishNow(context, status);
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryUnregister(
    grpc::CallbackServerContext* context, const inference::SystemSharedMemoryUnregisterRequest* request,
    inference::SystemSharedMemoryUnregisterResponse*) {
  absl::Status status = CheckSharedMemoryAccess(guard_, AdminGuard::Operation::kAdmin, *context);
  if (status.ok()) status = infera::SystemSharedMemoryUnregister(shared_memory_, *request);
  return FinishNow(context, status);
}

grpc::ServerUnaryReactor* InferenceService::CudaSharedMemoryStatus(
    grpc::CallbackServerContext* context, const inference::CudaSharedMemoryStatusRequest* request,
    inference::CudaSharedMemoryStatusResponse*) {
  absl::Status status = CheckSharedMemoryAccess(guard_, AdminGuard::Operation::kRead, *context);
  if (status.ok()) status = infera::CudaSharedMemoryStatus(*request);
  return FinishNow(context, status);
}

grpc::ServerUnaryReactor* InferenceService::CudaSharedMemoryRegister(
    grpc::CallbackServerContext* context, const inference::CudaSharedMemoryRegisterRequest*,
    inference::CudaSharedMemoryRegisterResponse*) {
  absl::Status status = CheckSharedMemoryAccess(guard_, AdminGuard::Operation::kAdmin, *context);
  return FinishNow(context, status.ok() ? CudaSharedMemoryUnsupported() : status);
}

grpc::ServerUnaryReactor* InferenceService::CudaSharedMemoryUnregister(
    grpc::CallbackServerContext* context, const inference::CudaSharedMemoryUnregisterRequest*,
    inference::CudaSharedMemoryUnregisterResponse*) {
  absl::Status status = CheckSharedMemoryAccess(guard_, AdminGuard::Operation::kAdmin, *context);
  return FinishNow(context, status.ok() ? CudaSharedMemoryUnsupported() : status);
}

}  // namespace infera
