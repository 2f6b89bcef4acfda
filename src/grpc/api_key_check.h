// The gRPC side of API keys (docs/api_keys.md): the key from metadata
// `authorization: Bearer <key>`, and what each RPC needs from it, decided from its
// request message (the model it names). Called once per call from the wrapper every
// unary method goes through (inference_service.cc), and per message of ModelInfer /
// ModelStreamInfer. ServerLive, ServerReady and grpc.health.v1 need no key.
//
//   ASSIGN_OR_RETURN(ApiKeyGrantPtr grant, AuthorizeGrpcCall(keys, context, request));
//
// With no store (keys off) every call is admitted with a null grant.
// Thread-safe (free functions over a thread-safe store).
#ifndef INFERA_GRPC_API_KEY_CHECK_H_
#define INFERA_GRPC_API_KEY_CHECK_H_

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "grpc_service.pb.h"
#include "grpcpp/server_context.h"
#include "security/api_key_store.h"

namespace infera {

// What one RPC needs from a key.
struct GrpcKeyAccess {
  bool open = false;
  uint8_t right = kRightRead;
  std::string_view model{};  // empty: none
  bool every_model = false;  // an aggregate over all models: needs models=*
};

GrpcKeyAccess GrpcKeyAccessFor(const inference::ServerLiveRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::ServerReadyRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::ServerMetadataRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelReadyRequest& request);
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelMetadataRequest& request);
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelConfigRequest& request);
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelStatisticsRequest& request);
GrpcKeyAccess GrpcKeyAccessFor(const inference::RepositoryIndexRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::RepositoryModelLoadRequest& request);
GrpcKeyAccess GrpcKeyAccessFor(const inference::RepositoryModelUnloadRequest& request);
GrpcKeyAccess GrpcKeyAccessFor(const inference::TraceSettingRequest& request);
GrpcKeyAccess GrpcKeyAccessFor(const inference::LogSettingsRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::SystemSharedMemoryStatusRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::SystemSharedMemoryRegisterRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::SystemSharedMemoryUnregisterRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::CudaSharedMemoryStatusRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::CudaSharedMemoryRegisterRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::CudaSharedMemoryUnregisterRequest&);
GrpcKeyAccess GrpcKeyAccessFor(const inference::ModelInferRequest& request);

// The value of metadata `authorization`, if sent.
std::optional<std::string_view> GrpcAuthorization(const grpc::ServerContext& context);

// Admits a call needing `access`: the grant (null with no store or an open RPC), or
// UNAUTHENTICATED / PERMISSION_DENIED / RESOURCE_EXHAUSTED.
absl::StatusOr<ApiKeyGrantPtr> AuthorizeGrpc(ApiKeyStore* store, const grpc::ServerContext& context,
                                             const GrpcKeyAccess& access);

template <typename Request>
absl::StatusOr<ApiKeyGrantPtr> AuthorizeGrpcCall(ApiKeyStore* store, const grpc::ServerContext& context,
                                                 const Request& request) {
  if (store == nullptr) return ApiKeyGrantPtr();
  return AuthorizeGrpc(store, context, GrpcKeyAccessFor(request));
}

}  // namespace infera

#endif  // INFERA_GRPC_API_KEY_CHECK_H_
