// The gRPC side of Triton's shared-memory extensions (SystemSharedMemory{Status,
// Register,Unregister}, CudaSharedMemory{Status,Register,Unregister}), answered inline
// by InferenceService. The registry and the rules are shm/shared_memory_registry.h's;
// HTTP's counterpart is http/shared_memory_routes.h, with the same messages.
//
//   - Access: the AdminGuard's shared-memory category (api/admin_guard.h), the same rule
//     as over HTTP. Register is an admin operation, PERMISSION_DENIED unless the operator
//     opened it (--allow-client-shm=true, --admin-token, a restricted group); Unregister
//     is a release (with --admin-token it needs metadata `authorization: Bearer <token>`,
//     never closed); Status is a read, restricted only by a --grpc-restricted-protocol
//     group naming shared-memory. InferenceService checks it (grpc/admin_audit.h) and
//     audits refusals, registrations and unregistrations.
//   - SystemSharedMemoryUnregister with an empty name unregisters every region (Triton).
//   - CUDA, as a CPU-only Triton: Status lists no region (NOT_FOUND for a name);
//     Unregister succeeds; Register is INVALID_ARGUMENT "failed to register CUDA shared
//     memory region: '<name>', GPUs not supported" (shm CudaSharedMemoryChange).
//
// Thread-safe (the registry is).
#ifndef INFERA_GRPC_SHARED_MEMORY_HANDLERS_H_
#define INFERA_GRPC_SHARED_MEMORY_HANDLERS_H_

#include "absl/status/status.h"
#include "api/admin_guard.h"
#include "grpc_service.pb.h"
#include "grpcpp/server_context.h"
#include "shm/shared_memory_registry.h"

namespace infera {

// `registry` null: the system RPCs answer UNAVAILABLE (no registry on this server).
absl::Status SystemSharedMemoryStatus(const SharedMemoryRegistry* registry,
                                      const inference::SystemSharedMemoryStatusRequest& request,
                                      inference::SystemSharedMemoryStatusResponse* response);
absl::Status SystemSharedMemoryRegister(SharedMemoryRegistry* registry,
                                        const inference::SystemSharedMemoryRegisterRequest& request);
absl::Status SystemSharedMemoryUnregister(
    SharedMemoryRegistry* registry, const inference::SystemSharedMemoryUnregisterRequest& request);

absl::Status CudaSharedMemoryStatus(const inference::CudaSharedMemoryStatusRequest& request);
// UNIMPLEMENTED, for Register and Unregister.
absl::Status CudaSharedMemoryRegister(const inference::CudaSharedMemoryRegisterRequest& request);
absl::Status CudaSharedMemoryUnregister(const inference::CudaSharedMemoryUnregisterRequest& request);

}  // namespace infera

#endif  // INFERA_GRPC_SHARED_MEMORY_HANDLERS_H_
