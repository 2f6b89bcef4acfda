// HealthService: the standard grpc.health.v1.Health/Check, for Kubernetes gRPC probes,
// grpc_health_probe and load balancers.
//
//   service ""  or "inference.GRPCInferenceService"  ->  SERVING when the server is
//   ready (Server::IsReady: every model loaded unless --strict-readiness=false, not
//   draining), else NOT_SERVING
//   any other service name                            ->  NOT_FOUND
//
// Watch is not implemented (UNIMPLEMENTED with no message, what gRPC answers for an
// unimplemented method), which the health protocol allows.
//
// Both methods are served on the completion-queue threads (infer_cq_threads.h), like
// every other RPC: Check as an AsyncUnaryMethod answered inline, Watch as a raw async
// method whose calls are answered UNIMPLEMENTED at once (a sync or callback method would
// make gRPC start threads of its own for it).
//
// Thread-safe.
#ifndef INFERA_GRPC_HEALTH_SERVICE_H_
#define INFERA_GRPC_HEALTH_SERVICE_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "grpc/async_unary_call.h"
#include "grpc/live_calls.h"
#include "health.grpc.pb.h"

namespace infera {

using AsyncHealthService =
    grpc::health::v1::Health::WithAsyncMethod_Check<grpc::health::v1::Health::WithRawMethod_Watch<
        grpc::health::v1::Health::Service>>;

class HealthService final {
 public:
  explicit HealthService(std::function<bool()> server_ready);

  // Check and Watch, for the queue threads; every matched call is counted in
  // `live_calls`. This service and `live_calls` outlive the methods' calls.
  std::vector<std::unique_ptr<AsyncMethod>> Methods(LiveCalls* live_calls);

  // The gRPC service to register with the server builder.
  AsyncHealthService& service() { return service_; }

  // The answer to Check (see the file comment).
  absl::Status Check(const grpc::health::v1::HealthCheckRequest& request,
                     grpc::health::v1::HealthCheckResponse* response) const;

 private:
  const std::function<bool()> server_ready_;
  AsyncHealthService service_;
};

}  // namespace infera

#endif  // INFERA_GRPC_HEALTH_SERVICE_H_
