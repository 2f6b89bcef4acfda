#include "grpc/inference_service.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "common/status.h"
#include "grpc/api_key_check.h"
#include "protocol/log_settings.h"
#include "protocol/model_answers.h"
#include "grpc/admin_audit.h"
#include "grpc/shared_memory_handlers.h"

namespace infera {
namespace {

// Triton's protocol category of a control-plane call (api/admin_guard.h); nullopt for
// the admin calls, whose handlers check their own category.
template <typename Request>
constexpr std::optional<ApiCategory> ProtocolCategoryOf() {
  if constexpr (std::is_same_v<Request, inference::ServerLiveRequest> ||
                std::is_same_v<Request, inference::ServerReadyRequest> ||
                std::is_same_v<Request, inference::ModelReadyRequest>) {
    return ApiCategory::kHealth;
  } else if constexpr (std::is_same_v<Request, inference::ServerMetadataRequest> ||
                       std::is_same_v<Request, inference::ModelMetadataRequest>) {
    return ApiCategory::kMetadata;
  } else if constexpr (std::is_same_v<Request, inference::ModelConfigRequest>) {
    return ApiCategory::kModelConfig;
  } else if constexpr (std::is_same_v<Request, inference::ModelStatisticsRequest>) {
    return ApiCategory::kStatistics;
  } else {
    return std::nullopt;
  }
}

// An AsyncUnaryMethod whose handler answers inline: `handler`'s status (the response as
// it filled it when OK), after the call passed its protocol category's restriction and
// its API key was admitted (grpc/api_key_check.h).
template <typename Service, typename Request, typename Response>
std::unique_ptr<AsyncMethod> InlineMethod(
    std::type_identity_t<Service>* service,
    void (Service::*request)(grpc::ServerContext*, Request*, grpc::ServerAsyncResponseWriter<Response>*,
                             grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*),
    const InferenceService* self,
    absl::Status (InferenceService::*handler)(grpc::ServerContext&, const Request&, Response*) const,
    LiveCalls* live_calls, ApiKeyStore* api_keys) {
  return MakeAsyncUnaryMethod<Service, Request, Response>(
      service, request,
      [self, handler, api_keys](grpc::ServerContext& context, const Request& message, Response* response,
                                UnaryReply reply) {
        if constexpr (constexpr std::optional<ApiCategory> category = ProtocolCategoryOf<Request>()) {
          absl::Status restricted = self->guard().CheckRestricted(*category, MetadataLookup(context));
          if (!restricted.ok()) return std::move(reply)(std::move(restricted));
        }
        absl::StatusOr<ApiKeyGrantPtr> grant = AuthorizeGrpcCall(api_keys, context, message);
        if (!grant.ok()) return std::move(reply)(grant.status());
        absl::Status status = (self->*handler)(context, message, response);
        if constexpr (std::is_same_v<Response, inference::RepositoryIndexResponse>) {
          if (status.ok() && *grant != nullptr) {  // the key's models only
            auto* models = response->mutable_models();
            models->erase(std::remove_if(models->begin(), models->end(),
                                         [&](const auto& m) { return !(*grant)->entry.AllowsModel(m.name()); }),
                          models->end());
          }
        }
        std::move(reply)(std::move(status));
      },
      live_calls);
}

// The audit target of a shared-memory call: the region, or "*" for every region.
std::string_view RegionTarget(const std::string& name) { return name.empty() ? std::string_view("*") : name; }

}  // namespace

absl::Status InferenceService::AuditedSharedMemory(const Context& context, AdminGuard::Operation operation,
                                                   std::string_view action, const std::string& region,
                                                   absl::FunctionRef<absl::Status()> change) const {
  RETURN_IF_ERROR(CheckGuard(context, ApiCategory::kSharedMemory, operation, action, RegionTarget(region)));
  absl::Status status = change();
  RecordAudit(Audit(context, ApiCategory::kSharedMemory, action, RegionTarget(region)), status);
  return status;
}

InferenceService::InferenceService(ModelManager& manager, const MetadataHandlers& handlers,
                                   AdminExecutor& admin, SharedMemoryRegistry* shared_memory,
                                   AdminGuard guard, ApiKeyStore* api_keys)
    : manager_(manager), handlers_(handlers), admin_(admin), shared_memory_(shared_memory),
      guard_(std::move(guard)), api_keys_(api_keys) {}

std::vector<std::unique_ptr<AsyncMethod>> InferenceService::Methods(LiveCalls* live_calls) {
  using Self = InferenceService;
  // Each generated RequestX belongs to its own mixin class of AsyncInferService.
  AsyncInferService* service = &service_;
  std::vector<std::unique_ptr<AsyncMethod>> methods;
  auto add_inline = [&](auto request, auto handler) {
    methods.push_back(InlineMethod(service, request, this, handler, live_calls, api_keys_));
  };
  add_inline(&async_infer_internal::C0::RequestServerLive, &Self::ServerLive);
  add_inline(&async_infer_internal::C1::RequestServerReady, &Self::ServerReady);
  add_inline(&async_infer_internal::C2::RequestModelReady, &Self::ModelReady);
  add_inline(&async_infer_internal::C3::RequestServerMetadata, &Self::ServerMetadata);
  add_inline(&async_infer_internal::C4::RequestModelMetadata, &Self::ModelMetadata);
  add_inline(&async_infer_internal::C5::RequestModelConfig, &Self::ModelConfig);
  add_inline(&async_infer_internal::C6::RequestModelStatistics, &Self::ModelStatistics);
  add_inline(&async_infer_internal::C7::RequestRepositoryIndex, &Self::RepositoryIndex);
  add_inline(&async_infer_internal::C10::RequestTraceSetting, &Self::TraceSetting);
  add_inline(&async_infer_internal::C11::RequestSystemSharedMemoryStatus, &Self::SystemSharedMemoryStatus);
  add_inline(&async_infer_internal::C12::RequestSystemSharedMemoryRegister, &Self::SystemSharedMemoryRegister);
  add_inline(&async_infer_internal::C13::RequestSystemSharedMemoryUnregister, &Self::SystemSharedMemoryUnregister);
  add_inline(&async_infer_internal::C14::RequestCudaSharedMemoryStatus, &Self::CudaSharedMemoryStatus);
  add_inline(&async_infer_internal::C15::RequestCudaSharedMemoryRegister, &Self::CudaSharedMemoryRegister);
  add_inline(&async_infer_internal::C16::RequestCudaSharedMemoryUnregister, &Self::CudaSharedMemoryUnregister);
  add_inline(&async_infer_internal::C17::RequestLogSettings, &Self::LogSettings);
  methods.push_back(MakeAsyncUnaryMethod(
      service, &async_infer_internal::C8::RequestRepositoryModelLoad,
      [this](grpc::ServerContext& context, const inference::RepositoryModelLoadRequest& request,
             inference::RepositoryModelLoadResponse* response,
             UnaryReply reply) { RepositoryModelLoad(context, request, response, std::move(reply)); },
      live_calls));
  methods.push_back(MakeAsyncUnaryMethod(
      service, &async_infer_internal::C9::RequestRepositoryModelUnload,
      [this](grpc::ServerContext& context, const inference::RepositoryModelUnloadRequest& request,
             inference::RepositoryModelUnloadResponse* response,
             UnaryReply reply) { RepositoryModelUnload(context, request, response, std::move(reply)); },
      live_calls));
  return methods;
}

absl::Status InferenceService::ServerLive(Context&, const inference::ServerLiveRequest&,
                                          inference::ServerLiveResponse* response) const {
  response->set_live(true);
  return absl::OkStatus();
}

absl::Status InferenceService::ServerReady(Context&, const inference::ServerReadyRequest&,
                                           inference::ServerReadyResponse* response) const {
  response->set_ready(handlers_.ServerReady());
  return absl::OkStatus();
}

absl::Status InferenceService::ModelReady(Context&, const inference::ModelReadyRequest& request,
                                          inference::ModelReadyResponse* response) const {
  return handlers_.ModelReady(request, response);
}

absl::Status InferenceService::ServerMetadata(Context&, const inference::ServerMetadataRequest&,
                                              inference::ServerMetadataResponse* response) const {
  handlers_.ServerMetadata(response);
  return absl::OkStatus();
}

absl::Status InferenceService::ModelMetadata(Context&, const inference::ModelMetadataRequest& request,
                                             inference::ModelMetadataResponse* response) const {
  return handlers_.ModelMetadata(request, response);
}

absl::Status InferenceService::ModelConfig(Context&, const inference::ModelConfigRequest& request,
                                           inference::ModelConfigResponse* response) const {
  return handlers_.ModelConfig(request, response);
}

absl::Status InferenceService::ModelStatistics(Context&, const inference::ModelStatisticsRequest& request,
                                               inference::ModelStatisticsResponse* response) const {
  return handlers_.ModelStatistics(request, response);
}

absl::Status InferenceService::RepositoryIndex(Context& context, const inference::RepositoryIndexRequest& request,
                                               inference::RepositoryIndexResponse* response) const {
  RETURN_IF_ERROR(CheckGuard(context, ApiCategory::kModelRepository, AdminGuard::Operation::kRead,
                             "repository.index", "server"));
  handlers_.RepositoryIndex(request, response);
  return absl::OkStatus();
}

absl::Status InferenceService::CheckModelControl(const Context& context, std::string_view action,
                                                 std::string_view model) const {
  // The restriction first (Triton's order), then explicit mode, then the other rules.
  if (absl::Status restricted = guard_.CheckRestricted(ApiCategory::kModelRepository, MetadataLookup(context));
      !restricted.ok()) {
    AuditEvent event = Audit(context, ApiCategory::kModelRepository, action, model);
    event.outcome = AuditOutcome::Denied();
    RecordAudit(event);
    return restricted;
  }
  if (absl::Status control = CheckExplicitModelControl(manager_); !control.ok()) {
    RecordAudit(Audit(context, ApiCategory::kModelRepository, action, model), control);
    return control;
  }
  return CheckGuard(context, ApiCategory::kModelRepository, AdminGuard::Operation::kAdmin, action, model);
}

absl::Status InferenceService::CheckGuard(const Context& context, ApiCategory category,
                                          AdminGuard::Operation operation, std::string_view action,
                                          std::string_view target) const {
  return CheckGrpcAdminAccess(guard_, category, operation, context, action, target);
}

AuditEvent InferenceService::Audit(const Context& context, ApiCategory category, std::string_view action,
                                   std::string_view target) const {
  return GrpcAdminAudit(guard_, category, context, action, target);
}

void InferenceService::RepositoryModelLoad(Context& context, const inference::RepositoryModelLoadRequest& request,
                                           inference::RepositoryModelLoadResponse*, UnaryReply reply) const {
  if (auto key = AuthorizeGrpcCall(api_keys_, context, request); !key.ok()) return std::move(reply)(key.status());
  if (absl::Status admin = CheckModelControl(context, "model.load", request.model_name()); !admin.ok()) {
    return std::move(reply)(std::move(admin));
  }
  AuditEvent audit = Audit(context, ApiCategory::kModelRepository, "model.load", request.model_name());
  std::optional<inference::ModelConfig> override;
  auto config = request.parameters().find("config");
  if (config != request.parameters().end()) {
    absl::StatusOr<inference::ModelConfig> parsed =
        config->second.has_string_param()
            ? ParseConfigOverride(config->second.string_param(), "parameter 'config'")
            : absl::InvalidArgumentError("parameter 'config' must be a string_param (JSON)");
    if (!parsed.ok()) {
      RecordAudit(std::move(audit), parsed.status());
      return std::move(reply)(parsed.status());
    }
    override = std::move(*parsed);
  }
  FinishWhenDone(std::move(reply), std::move(audit),
                 [this, name = request.model_name(), override = std::move(override)]() mutable {
                   return manager_.LoadModel(name, std::move(override));
                 });
}

void InferenceService::RepositoryModelUnload(Context& context,
                                             const inference::RepositoryModelUnloadRequest& request,
                                             inference::RepositoryModelUnloadResponse*, UnaryReply reply) const {
  if (auto key = AuthorizeGrpcCall(api_keys_, context, request); !key.ok()) return std::move(reply)(key.status());
  if (absl::Status admin = CheckModelControl(context, "model.unload", request.model_name()); !admin.ok()) {
    return std::move(reply)(std::move(admin));
  }
  FinishWhenDone(std::move(reply), Audit(context, ApiCategory::kModelRepository, "model.unload", request.model_name()),
                 [this, name = request.model_name()] { return manager_.UnloadModel(name); });
}

absl::Status InferenceService::TraceSetting(Context& context, const inference::TraceSettingRequest& request,
                                            inference::TraceSettingResponse* response) const {
  // Reading is a request without settings; anything else changes them.
  const AdminGuard::Operation operation =
      request.settings().empty() ? AdminGuard::Operation::kRead : AdminGuard::Operation::kAdmin;
  const std::string_view target =
      request.model_name().empty() ? std::string_view("server") : std::string_view(request.model_name());
  const bool update = operation == AdminGuard::Operation::kAdmin;
  RETURN_IF_ERROR(CheckGuard(context, ApiCategory::kTrace, operation, update ? "trace.update" : "trace.read", target));
  absl::Status status = handlers_.TraceSetting(request, response);
  if (update) RecordAudit(Audit(context, ApiCategory::kTrace, "trace.update", target), status);
  return status;
}

absl::Status InferenceService::LogSettings(Context& context, const inference::LogSettingsRequest& request,
                                           inference::LogSettingsResponse* response) const {
  // Reading is guarded too, as over HTTP: with --admin-token the whole extension is admin.
  const bool update = !request.settings().empty();
  RETURN_IF_ERROR(CheckGuard(context, ApiCategory::kLogging, AdminGuard::Operation::kAdmin,
                             update ? "logging.update" : "logging.read", "server"));
  absl::Status status = BuildLogSettings(request, response);
  if (update) RecordAudit(Audit(context, ApiCategory::kLogging, "logging.update", "server"), status);
  return status;
}

void InferenceService::FinishWhenDone(UnaryReply reply, AuditEvent audit,
                                      absl::AnyInvocable<absl::Status() &&> work) const {
  // The call stays alive until its reply runs (the executor calls `done` exactly once,
  // on its worker or at once here); gRPC waits for the call at shutdown, and the
  // executor is shut down (answering what it holds) before the server's queues stop.
  admin_.Submit({std::move(work), [reply = std::move(reply), audit = std::move(audit)](absl::Status status) mutable {
                   RecordAudit(std::move(audit), status);
                   std::move(reply)(std::move(status));
                 }});
}

absl::Status InferenceService::SystemSharedMemoryStatus(Context& context,
                                                        const inference::SystemSharedMemoryStatusRequest& request,
                                                        inference::SystemSharedMemoryStatusResponse* response) const {
  RETURN_IF_ERROR(CheckGuard(context, ApiCategory::kSharedMemory, AdminGuard::Operation::kRead,
                             "shm.system.status", RegionTarget(request.name())));
  return infera::SystemSharedMemoryStatus(shared_memory_, request, response);
}

absl::Status InferenceService::SystemSharedMemoryRegister(
    Context& context, const inference::SystemSharedMemoryRegisterRequest& request,
    inference::SystemSharedMemoryRegisterResponse*) const {
  return AuditedSharedMemory(context, AdminGuard::Operation::kAdmin, "shm.system.register", request.name(),
                             [&] { return infera::SystemSharedMemoryRegister(shared_memory_, request); });
}

absl::Status InferenceService::SystemSharedMemoryUnregister(
    Context& context, const inference::SystemSharedMemoryUnregisterRequest& request,
    inference::SystemSharedMemoryUnregisterResponse*) const {
  return AuditedSharedMemory(context, AdminGuard::Operation::kRelease, "shm.system.unregister", request.name(),
                             [&] { return infera::SystemSharedMemoryUnregister(shared_memory_, request); });
}

absl::Status InferenceService::CudaSharedMemoryStatus(Context& context,
                                                      const inference::CudaSharedMemoryStatusRequest& request,
                                                      inference::CudaSharedMemoryStatusResponse*) const {
  RETURN_IF_ERROR(CheckGuard(context, ApiCategory::kSharedMemory, AdminGuard::Operation::kRead,
                             "shm.cuda.status", RegionTarget(request.name())));
  return infera::CudaSharedMemoryStatus(request);
}

absl::Status InferenceService::CudaSharedMemoryRegister(Context& context,
                                                        const inference::CudaSharedMemoryRegisterRequest& request,
                                                        inference::CudaSharedMemoryRegisterResponse*) const {
  return AuditedSharedMemory(context, AdminGuard::Operation::kAdmin, "shm.cuda.register", request.name(),
                             [&] { return infera::CudaSharedMemoryRegister(request); });
}

absl::Status InferenceService::CudaSharedMemoryUnregister(Context& context,
                                                          const inference::CudaSharedMemoryUnregisterRequest& request,
                                                          inference::CudaSharedMemoryUnregisterResponse*) const {
  return AuditedSharedMemory(context, AdminGuard::Operation::kRelease, "shm.cuda.unregister", request.name(),
                             [&] { return infera::CudaSharedMemoryUnregister(request); });
}

}  // namespace infera
