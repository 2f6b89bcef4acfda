// The gRPC side of the AdminGuard (api/admin_guard.h) and the audit log
// (security/audit_log.h, docs/security.md "Audit log"): the guard's verdict on a call's
// metadata, with every refusal written to the audit log, and the audit event of an admin
// call (credential from the metadata, peer from ServerContext::peer()).
//
//   RETURN_IF_ERROR(CheckGrpcAdminAccess(guard, ApiCategory::kTrace, Operation::kAdmin,
//                                        context, "trace.update", "server"));
//   absl::Status status = ...;  // the action
//   RecordAudit(GrpcAdminAudit(guard, ApiCategory::kTrace, context, "trace.update", "server"), status);
//
// Thread-safe (pure functions, and the thread-safe audit log).
#ifndef INFERA_GRPC_ADMIN_AUDIT_H_
#define INFERA_GRPC_ADMIN_AUDIT_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "api/admin_guard.h"
#include "grpcpp/server_context.h"
#include "security/audit_log.h"

namespace infera {

// Looks up the call's client metadata (keys are lower-case in gRPC).
AdminGuard::HeaderLookup MetadataLookup(const grpc::ServerContextBase& context);

// gRPC's peer URI as "ip:port": "ipv4:10.0.0.1:5000" -> "10.0.0.1:5000",
// "ipv6:[::1]:5000" (or "ipv6:%5B::1%5D:5000") -> "[::1]:5000"; anything else unchanged.
std::string GrpcPeerAddress(std::string_view peer);

// The audit event of an admin call (transport "grpc"); its outcome is still to be set.
AuditEvent GrpcAdminAudit(const AdminGuard& guard, ApiCategory category, const grpc::ServerContextBase& context,
                          std::string_view action, std::string_view target);

// The guard's verdict; a refusal is audited as `action` on `target`, outcome `denied`.
absl::Status CheckGrpcAdminAccess(const AdminGuard& guard, ApiCategory category, AdminGuard::Operation operation,
                                  const grpc::ServerContextBase& context, std::string_view action,
                                  std::string_view target);

}  // namespace infera

#endif  // INFERA_GRPC_ADMIN_AUDIT_H_
