#include "http/repository_routes.h"

#include <utility>

#include "common/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "http/http_status.h"
#include "http/url_path.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

constexpr std::string_view kPrefix = "/v2/repository/models/";

// Reads the optional {"parameters": {"config": "<ModelConfig JSON>"}} of a load.
absl::StatusOr<std::optional<inference::ModelConfig>> ConfigOverride(const std::string& body) {
  if (body.empty()) return std::optional<inference::ModelConfig>();
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError("load body must be a JSON object");
  }
  if (!doc.HasMember("parameters")) return std::optional<inference::ModelConfig>();
  const auto& params = doc["parameters"];
  if (!params.IsObject()) return absl::InvalidArgumentError("'parameters' must be an object");
  if (!params.HasMember("config")) return std::optional<inference::ModelConfig>();
  if (!params["config"].IsString()) {
    return absl::InvalidArgumentError("parameters.config must be a string holding the model config as JSON");
  }
  inference::ModelConfig config;
  google::protobuf::util::JsonParseOptions options;
  auto status = google::protobuf::util::JsonStringToMessage(
      std::string(params["config"].GetString(), params["config"].GetStringLength()), &config, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(StrCat("parameters.config is not a valid model config: ", status.ToString()));
  }
  return std::optional<inference::ModelConfig>(std::move(config));
}

}  // namespace

RepositoryRoutes::RepositoryRoutes(ModelManager& manager, AdminExecutor& admin, std::string admin_token)
    : manager_(manager), admin_(admin), admin_token_(std::move(admin_token)) {}

bool RepositoryRoutes::Matches(std::string_view path) { return path.substr(0, kPrefix.size()) == kPrefix; }

void RepositoryRoutes::Handle(HttpRequest request, HttpResponder responder) const {
  const std::vector<std::string_view> parts = SplitPath(request.path());
  // v2 repository models {m} {action...}
  if (parts.size() < 5) return std::move(responder).Send(ErrorResponse(404, StrCat("no route for ", request.path())));
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
  if (!admin_token_.empty() && request.Header("authorization") != "Bearer " + admin_token_) {
    HttpResponse response = ErrorResponse(401, "this admin operation needs Authorization: Bearer <admin token>");
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
    return std::move(responder).Send(std::move(response));
  }
  if (action != "canary/promote" && manager_.mode() != ModelControlMode::kExplicit) {
    return std::move(responder).Send(ErrorResponse(
        409, "explicit model load / unload is not allowed unless --model-control-mode=explicit"));
  }
  if (action == "canary/promote") {
    absl::Status status = manager_.PromoteCanary(*name);
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
                 [responder = std::move(responder)](absl::Status status) mutable {
                   std::move(responder).Send(status.ok() ? HttpResponse{200, "application/json", "", {}}
                                                         : ErrorResponse(status));
                 }});
}

}  // namespace infera
