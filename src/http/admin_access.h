// The HTTP side of the AdminGuard (api/admin_guard.h): checks a request's headers
// and turns a refusal into the response to send.
//
//   if (absl::Status denied = CheckAdminAccess(guard, ApiCategory::kLogging,
//                                              AdminGuard::Operation::kAdmin, request);
//       !denied.ok()) {
//     return AdminDeniedResponse(denied);  // 401 (with WWW-Authenticate) or 403
//   }
//
// Thread-safe (pure functions).
#ifndef INFERA_HTTP_ADMIN_ACCESS_H_
#define INFERA_HTTP_ADMIN_ACCESS_H_

#include "absl/status/status.h"
#include "api/admin_guard.h"
#include "http/http_message.h"

namespace infera {

absl::Status CheckAdminAccess(const AdminGuard& guard, ApiCategory category,
                              AdminGuard::Operation operation, const HttpRequest& request);

// ErrorResponse(status), with `WWW-Authenticate: Bearer` on a 401.
HttpResponse AdminDeniedResponse(const absl::Status& status);

}  // namespace infera

#endif  // INFERA_HTTP_ADMIN_ACCESS_H_
