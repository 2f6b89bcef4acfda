#include "grpc/health_service.h"

#include "common/str_cat.h"
#include "grpc/grpc_status.h"

namespace infera {

HealthService::HealthService(std::function<bool()> server_ready)
    : server_ready_(std::move(server_ready)) {}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const grpc::health::v1::HealthCheckRequest* request,
                                               grpc::health::v1::HealthCheckResponse* response) {
  using grpc::health::v1::HealthCheckResponse;
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const std::string& service = request->service();
  if (!service.empty() && service != "inference.GRPCInferenceService") {
    reactor->Finish(ToGrpcStatus(absl::NotFoundError(StrCat(
        "unknown service '", service, "' (known: \"\", \"inference.GRPCInferenceService\")"))));
    return reactor;
  }
  const bool ready = server_ready_ && server_ready_();
  response->set_status(ready ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace infera
