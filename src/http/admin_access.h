// The HTTP side of the AdminGuard (api/admin_guard.h): checks a request's headers,
// turns a refusal into the response to send, and writes the audit log
// (security/audit_log.h, docs/security.md "Audit log").
//
//   if (absl::Status denied = CheckAdminAccess(guard, ApiCategory::kLogging,
//                                              AdminGuard::Operation::kAdmin, request,
//                                              "logging.update", "server");
//       !denied.ok()) {
//     return AdminDeniedResponse(denied);  // 401 (with WWW-Authenticate) or 403; audited
//   }
//   HttpResponse response = ...;            // the action
//   AuditHttpResponse(HttpAdminAudit(guard, ApiCategory::kLogging, request, "logging.update",
//                                    "server"), response);
//
// Thread-safe (pure functions, and the thread-safe audit log).
#ifndef INFERA_HTTP_ADMIN_ACCESS_H_
#define INFERA_HTTP_ADMIN_ACCESS_H_

#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "api/admin_guard.h"
#include "http/http_message.h"
#include "security/audit_log.h"

namespace infera {

// The guard's verdict. A refusal is written to the audit log as `action` on `target`
// (reads too: every refused admin access is audited), outcome `denied`.
absl::Status CheckAdminAccess(const AdminGuard& guard, ApiCategory category,
                              AdminGuard::Operation operation, const HttpRequest& request,
                              std::string_view action, std::string_view target);

// Rule 1 alone (AdminGuard::CheckRestricted), audited like CheckAdminAccess: what a model
// load or unload checks before "explicit model load / unload is not allowed" (Triton's
// order), the other rules after it.
absl::Status CheckAdminRestriction(const AdminGuard& guard, ApiCategory category, const HttpRequest& request,
                                   std::string_view action, std::string_view target);

// ErrorResponse(status), with `WWW-Authenticate: Bearer` on a 401.
HttpResponse AdminDeniedResponse(const absl::Status& status);

// The audit event of an admin request over HTTP (credential, peer, transport "http",
// action, target); its outcome is still to be set.
AuditEvent HttpAdminAudit(const AdminGuard& guard, ApiCategory category, const HttpRequest& request,
                          std::string_view action, std::string_view target);

// Writes `event` with the outcome `response` says: `ok` for a 2xx, else
// `error: <the body's "error" message>` (or the status code when the body has none).
void AuditHttpResponse(AuditEvent event, const HttpResponse& response);

// Triton's protocol category (api/admin_guard.h) of a request path (percent-encoded,
// before '?'): health, metadata, model-config, statistics or inference; nullopt for the
// admin routes (their handlers check) and for paths of no category (the console, metrics).
std::optional<ApiCategory> HttpProtocolCategory(std::string_view path);

// Rule 1 for the protocol category of `request`'s path (OK when it has none or it is not
// restricted): 403 "This API is restricted, expecting header '<header>'". The server's
// dispatch runs it before the route table.
absl::Status CheckHttpProtocolRestriction(const AdminGuard& guard, const HttpRequest& request);

}  // namespace infera

#endif  // INFERA_HTTP_ADMIN_ACCESS_H_
