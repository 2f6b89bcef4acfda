#include "http/admin_access.h"

#include <string>
#include <vector>

#include "common/str_cat.h"
#include "http/http_status.h"
#include "http/url_path.h"
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

absl::Status CheckAdminRestriction(const AdminGuard& guard, ApiCategory category, const HttpRequest& request,
                                   std::string_view action, std::string_view target) {
  absl::Status verdict = guard.CheckRestricted(category, LookupIn(request));
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

std::optional<ApiCategory> HttpProtocolCategory(std::string_view path) {
  std::vector<std::string_view> parts = SplitPath(path);
  if (parts.empty()) return std::nullopt;
  if (parts[0] == "v1") {  // the OpenAI routes: /v1/models lists, the rest infers
    return parts.size() >= 2 && parts[1] == "models" ? ApiCategory::kMetadata : ApiCategory::kInference;
  }
  if (parts[0] != "v2") return std::nullopt;
  if (parts.size() == 1) return ApiCategory::kMetadata;
  if (parts[1] == "health") return ApiCategory::kHealth;
  if (parts[1] != "models" || parts.size() < 3) return std::nullopt;
  if (parts.size() == 3 && parts[2] == "stats") return ApiCategory::kStatistics;
  // /v2/models/{m}[/versions/{v}][/<action>]
  size_t action = 3;
  if (parts.size() >= 5 && parts[3] == "versions") action = 5;
  if (parts.size() == action) return ApiCategory::kMetadata;
  if (parts.size() != action + 1) return std::nullopt;  // trace/setting and unknown paths
  const std::string_view verb = parts[action];
  if (verb == "ready") return ApiCategory::kHealth;
  if (verb == "config") return ApiCategory::kModelConfig;
  if (verb == "stats" || verb == "diagnosis") return ApiCategory::kStatistics;
  if (verb == "infer" || verb == "generate" || verb == "generate_stream") return ApiCategory::kInference;
  return std::nullopt;
}

absl::Status CheckHttpProtocolRestriction(const AdminGuard& guard, const HttpRequest& request) {
  if (!guard.AnyRestricted()) return absl::OkStatus();  // no path parsing on the common path
  std::optional<ApiCategory> category = HttpProtocolCategory(request.path());
  if (!category) return absl::OkStatus();
  return guard.CheckRestricted(*category, LookupIn(request));
}

}  // namespace infera
