#include "http/admin_access.h"

#include "http/http_status.h"

namespace infera {

absl::Status CheckAdminAccess(const AdminGuard& guard, ApiCategory category,
                              AdminGuard::Operation operation, const HttpRequest& request) {
  return guard.Check(category, operation,
                     [&request](std::string_view name) { return request.Header(name); });
}

HttpResponse AdminDeniedResponse(const absl::Status& status) {
  HttpResponse response = ErrorResponse(status);
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
  }
  return response;
}

}  // namespace infera
