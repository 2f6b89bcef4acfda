#include "grpc/admin_audit.h"

#include <optional>

namespace infera {
namespace {

// Replaces every `from` in `text` with `to`.
std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

AdminGuard::HeaderLookup MetadataLookup(const grpc::ServerContextBase& context) {
  return [&metadata = context.client_metadata()](std::string_view name) -> std::optional<std::string_view> {
    auto it = metadata.find(grpc::string_ref(name.data(), name.size()));
    if (it == metadata.end()) return std::nullopt;
    return std::string_view(it->second.data(), it->second.size());
  };
}

std::string GrpcPeerAddress(std::string_view peer) {
  if (peer.substr(0, 5) == "ipv4:") return std::string(peer.substr(5));
  if (peer.substr(0, 5) == "ipv6:") {
    return ReplaceAll(ReplaceAll(std::string(peer.substr(5)), "%5B", "["), "%5D", "]");
  }
  return std::string(peer);
}

AuditEvent GrpcAdminAudit(const AdminGuard& guard, ApiCategory category, const grpc::ServerContextBase& context,
                          std::string_view action, std::string_view target) {
  AuditEvent event;
  event.credential = guard.PresentedCredential(category, MetadataLookup(context));
  event.peer = GrpcPeerAddress(context.peer());
  event.transport = "grpc";
  event.action = std::string(action);
  event.target = std::string(target);
  return event;
}

absl::Status CheckGrpcAdminAccess(const AdminGuard& guard, ApiCategory category, AdminGuard::Operation operation,
                                  const grpc::ServerContextBase& context, std::string_view action,
                                  std::string_view target) {
  absl::Status verdict = guard.Check(category, operation, MetadataLookup(context));
  if (!verdict.ok()) {
    AuditEvent event = GrpcAdminAudit(guard, category, context, action, target);
    event.outcome = AuditOutcome::Denied();
    RecordAudit(event);
  }
  return verdict;
}

}  // namespace infera
