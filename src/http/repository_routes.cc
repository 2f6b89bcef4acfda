#include "http/repository_routes.h"

#include <utility>

#include "common/json_reader.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "http/admin_access.h"
#include "http/http_status.h"
#include "http/kserve_extension_routes.h"
#include "http/url_path.h"
#include "protocol/model_answers.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

// Reads the optional {"parameters": {"config": "<ModelConfig JSON>"}} of a load.
absl::StatusOr<std::optional<inference::ModelConfig>> ConfigOverride(const std::string& body) {
  if (body.empty()) return std::optional<inference::ModelConfig>();
  rapidjson::Document doc;
  RETURN_IF_ERROR(ReadJson(body, "load body", doc));
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError("load body must be a JSON object");
  }
  if (!doc.HasMember("parameters")) return std::optional<inference::ModelConfig>();
  const auto& params = doc["parameters"];
  if (!params.IsObject()) return absl::InvalidArgumentError("'parameters' must be an object");
  if (!params.HasMember("config")) return std::optional<inference::ModelConfig>();
  if (!params["config"].IsString()) {
    return absl::InvalidArgumentError("parameters.config must be a string holding the model config as JSON");
  }
  ASSIGN_OR_RETURN(inference::ModelConfig config,
                   ParseConfigOverride(std::string_view(params["config"].GetString(),
                                                        params["config"].GetStringLength()),
                                       "parameters.config"));
  return std::optional<inference::ModelConfig>(std::move(config));
}

}  // namespace

RepositoryRoutes::RepositoryRoutes(ModelManager& manager, AdminExecutor& admin, AdminGuard guard)
    : manager_(manager), admin_(admin), guard_(std::move(guard)) {}

bool RepositoryRoutes::Matches(std::string_view path) {
  // Split as every route splits (empty segments ignored), so that no spelling of a
  // repository path reaches another handler past the guard.
  const std::vector<std::string_view> parts = SplitPath(path);
  return parts.size() >= 2 && parts[0] == "v2" && parts[1] == "repository";
}

void RepositoryRoutes::Handle(HttpRequest request, HttpResponder responder) const {
  const std::vector<std::string_view> parts = SplitPath(request.path());
  if (parts.size() == 3 && parts[2] == "index") {
    if (request.method != "POST") {
      HttpResponse response = ErrorResponse(405, "method not allowed; use POST");
      response.headers.emplace_back("Allow", "POST");
      return std::move(responder).Send(std::move(response));
    }
    if (absl::Status denied = CheckAdminAccess(guard_, ApiCategory::kModelRepository,
                                               AdminGuard::Operation::kRead, request, "repository.index",
                                               "server");
        !denied.ok()) {
      return std::move(responder).Send(AdminDeniedResponse(denied));
    }
    return std::move(responder).Send(RepositoryIndexResponse(manager_, request.body, request.api_key));
  }
  // v2 repository models {m} {action...}
  if (parts.size() < 5 || parts[2] != "models") {
    return std::move(responder).Send(ErrorResponse(404, StrCat("no route for ", request.path())));
  }
  std::optional<std::string> name = PercentDecode(parts[3]);
  if (!name || !ModelRepository::IsValidModelName(*name)) {
    return std::move(responder).Send(ErrorResponse(400, "invalid model name"));
  }
  std::string action(parts[4]);
  if (parts.size() == 6) action = StrCat(parts[4], "/", parts[5]);
  if (action != "load" && action != "unload" && action != "canary/promote") {
    return std::move(responder).Send(ErrorResponse(404, StrCat("no route for ", request.path())));
  }
  if (request.method != "POST") {
    HttpResponse response = ErrorResponse(405, "method not allowed; use POST");
    response.headers.emplace_back("Allow", "POST");
    return std::move(responder).Send(std::move(response));
  }
  const std::string_view audit_action = action == "load"     ? "model.load"
                                        : action == "unload" ? "model.unload"
                                                             : "model.canary_promote";
  // A restricted category is refused for its header first, as Triton does, then outside
  // explicit mode, then for the other rules.
  if (absl::Status denied =
          CheckAdminRestriction(guard_, ApiCategory::kModelRepository, request, audit_action, *name);
      !denied.ok()) {
    return std::move(responder).Send(AdminDeniedResponse(denied));
  }
  AuditEvent audit = HttpAdminAudit(guard_, ApiCategory::kModelRepository, request, audit_action, *name);
  if (action != "canary/promote") {
    if (absl::Status control = CheckExplicitModelControl(manager_); !control.ok()) {
      RecordAudit(std::move(audit), control);
      return std::move(responder).Send(
          ErrorResponse(409, std::string_view(control.message().data(), control.message().size())));
    }
  }
  if (absl::Status denied = CheckAdminAccess(guard_, ApiCategory::kModelRepository,
                                             AdminGuard::Operation::kAdmin, request, audit_action, *name);
      !denied.ok()) {
    return std::move(responder).Send(AdminDeniedResponse(denied));
  }
  if (action == "canary/promote") {
    absl::Status status = manager_.PromoteCanary(*name);
    RecordAudit(std::move(audit), status);
    return std::move(responder).Send(status.ok() ? HttpResponse{200, "application/json", "", {}}
                                                 : ErrorResponse(status));
  }
  // Loading can take seconds, and parsing the override is proportional to the body: the
  // admin executor runs both off the I/O thread.
  admin_.Submit({[this, name = std::move(*name), load = action == "load", body = std::move(request.body)] {
                   if (!load) return manager_.UnloadModel(name);
                   auto config = ConfigOverride(body);
                   return config.ok() ? manager_.LoadModel(name, std::move(*config)) : config.status();
                 },
                 [responder = std::move(responder), audit = std::move(audit)](absl::Status status) mutable {
                   RecordAudit(std::move(audit), status);
                   std::move(responder).Send(status.ok() ? HttpResponse{200, "application/json", "", {}}
                                                         : ErrorResponse(status));
                 }});
}

}  // namespace infera
