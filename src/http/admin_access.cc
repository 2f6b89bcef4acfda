#include "http/admin_access.h"

#include <string>

#include "common/str_cat.h"
#include "http/http_status.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

AdminGuard::HeaderLookup LookupIn(const HttpRequest& request) {
  return [&request](std::string_view name) { return request.Header(name); };
}

}  // namespace

absl::Status CheckAdminAccess(const AdminGuard& guard, ApiCategory category,
                              AdminGuard::Operation operation, const HttpRequest& request,
                              std::string_view action, std::string_view target) {
  absl::Status verdict = guard.Check(category, operation, LookupIn(request));
  if (!verdict.ok()) {
    AuditEvent event = HttpAdminAudit(guard, category, request, action, target);
    event.outcome = AuditOutcome::Denied();
    RecordAudit(event);
  }
  return verdict;
}

HttpResponse AdminDeniedResponse(const absl::Status& status) {
  HttpResponse response = ErrorResponse(status);
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
  }
  return response;
}

AuditEvent HttpAdminAudit(const AdminGuard& guard, ApiCategory category, const HttpRequest& request,
                          std::string_view action, std::string_view target) {
  AuditEvent event;
  event.credential = guard.PresentedCredential(category, LookupIn(request));
  event.peer = request.peer;
  event.transport = "http";
  event.action = std::string(action);
  event.target = std::string(target);
  return event;
}

void AuditHttpResponse(AuditEvent event, const HttpResponse& response) {
  if (response.status >= 200 && response.status < 300) {
    event.outcome = AuditOutcome::Ok();
  } else {
    rapidjson::Document body;
    body.Parse(response.body.data(), response.body.size());
    if (!body.HasParseError() && body.IsObject() && body.HasMember("error") && body["error"].IsString()) {
      event.outcome.text = StrCat("error: ", std::string_view(body["error"].GetString(),
                                                             body["error"].GetStringLength()));
    } else {
      event.outcome.text = StrCat("error: HTTP ", response.status);
    }
  }
  RecordAudit(event);
}

}  // namespace infera
