#include "grpc/api_key_check.h"

#include "grpc/admin_audit.h"
#include "security/api_key_audit.h"

namespace infera {
namespace {

GrpcKeyAccess Needs(uint8_t right, std::string_view model = {}) {
  GrpcKeyAccess access;
  access.right = right;
  access.model = model;
  return access;
}

// A read of one model, or of all of them when the request names none (statistics).
GrpcKeyAccess ReadOf(std::string_view model) {
  GrpcKeyAccess access = Needs(kRightRead, model);
  access.every_model = model.empty();
  return access;
}

}  // namespace

GrpcKeyAccess GrpcKeyAccessFor(const inference::ServerLiveRequest&) { return GrpcKeyAccess{.open = true}; }
GrpcKeyAccess GrpcKeyAccessFor(const inference::ServerReadyRequest&) { return GrpcKeyAccess{.open = true}; }
GrpcKeyAccess GrpcKeyAccessFor(const inference::ServerMetadataRequest&) { return Needs(kRightRead); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelReadyRequest& r) { return Needs(kRightRead, r.name()); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelMetadataRequest& r) { return Needs(kRightRead, r.name()); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelConfigRequest& r) { return Needs(kRightRead, r.name()); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelStatisticsRequest& r) { return ReadOf(r.name()); }
// The index lists only the key's models (inference_service.cc filters it).
GrpcKeyAccess GrpcKeyAccessFor(const inference::RepositoryIndexRequest&) { return Needs(kRightRead); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::RepositoryModelLoadRequest& r) {
  return Needs(kRightAdmin, r.model_name());
}
GrpcKeyAccess GrpcKeyAccessFor(const inference::RepositoryModelUnloadRequest& r) {
  return Needs(kRightAdmin, r.model_name());
}
GrpcKeyAccess GrpcKeyAccessFor(const inference::TraceSettingRequest& r) {
  return Needs(r.settings().empty() ? kRightRead : kRightAdmin, r.model_name());
}
GrpcKeyAccess GrpcKeyAccessFor(const inference::LogSettingsRequest&) { return Needs(kRightAdmin); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::SystemSharedMemoryStatusRequest&) { return Needs(kRightRead); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::SystemSharedMemoryRegisterRequest&) { return Needs(kRightAdmin); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::SystemSharedMemoryUnregisterRequest&) { return Needs(kRightAdmin); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::CudaSharedMemoryStatusRequest&) { return Needs(kRightRead); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::CudaSharedMemoryRegisterRequest&) { return Needs(kRightAdmin); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::CudaSharedMemoryUnregisterRequest&) { return Needs(kRightAdmin); }
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelInferRequest& r) { return Needs(kRightInfer, r.model_name()); }

std::optional<std::string_view> GrpcAuthorization(const grpc::ServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

absl::StatusOr<ApiKeyGrantPtr> AuthorizeGrpc(ApiKeyStore* store, const grpc::ServerContext& context,
                                             const GrpcKeyAccess& access) {
  if (store == nullptr || access.open) return ApiKeyGrantPtr();
  absl::StatusOr<ApiKeyGrantPtr> grant =
      store->Authorize(GrpcAuthorization(context), access.right,
                       access.model.empty() ? std::nullopt : std::optional<std::string_view>(access.model),
                       access.every_model);
  if (!grant.ok()) {
    AuditApiKeyRefusal(*store, GrpcAuthorization(context), GrpcPeerAddress(context.peer()), "grpc", access.right,
                       access.model, grant.status());
  }
  return grant;
}

}  // namespace infera
