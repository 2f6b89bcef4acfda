// HealthService: the standard grpc.health.v1.Health/Check, for Kubernetes gRPC probes,
// grpc_health_probe and load balancers.
//
//   service ""  or "inference.GRPCInferenceService"  ->  SERVING when the server is
//   ready (every model loaded, not draining), else NOT_SERVING
//   any other service name                            ->  NOT_FOUND
//
// Watch is not implemented (UNIMPLEMENTED), which the health protocol allows.
//
// Thread-safe.
#ifndef INFERA_GRPC_HEALTH_SERVICE_H_
#define INFERA_GRPC_HEALTH_SERVICE_H_

#include <functional>

#include "health.grpc.pb.h"

namespace infera {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  explicit HealthService(std::function<bool()> server_ready);

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* request,
                                  grpc::health::v1::HealthCheckResponse* response) override;

 private:
  const std::function<bool()> server_ready_;
};

}  // namespace infera

#endif  // INFERA_GRPC_HEALTH_SERVICE_H_
