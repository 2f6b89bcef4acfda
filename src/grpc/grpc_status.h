// The one place that maps an absl::Status to a gRPC status.
//
// absl's canonical codes are gRPC's codes (same names, same numbers), so the mapping is
// one to one: InvalidArgument -> INVALID_ARGUMENT, NotFound -> NOT_FOUND,
// ResourceExhausted (queue full, message too large) -> RESOURCE_EXHAUSTED,
// Unavailable (not ready, unloading, draining) -> UNAVAILABLE, Cancelled -> CANCELLED,
// Internal -> INTERNAL, ... A code absl may grow that gRPC lacks becomes UNKNOWN. The
// message is passed through unchanged: it names the problem.
//
// Thread-safe (pure functions).
#ifndef INFERA_GRPC_GRPC_STATUS_H_
#define INFERA_GRPC_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace infera {

grpc::StatusCode GrpcStatusCode(absl::StatusCode code);

// OK for an OK status; otherwise the mapped code with the status's message, and a
// Retry-After hint (common/retry_after.h) appended to it as " (retry after N s)".
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace infera

#endif  // INFERA_GRPC_GRPC_STATUS_H_
