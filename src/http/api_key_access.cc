#include "http/api_key_access.h"

#include <span>
#include <vector>

#include "common/retry_after.h"
#include "common/str_cat.h"
#include "http/url_path.h"
#include "security/api_key_audit.h"

namespace infera {
namespace {

HttpKeyAccess Read() { return HttpKeyAccess{}; }
HttpKeyAccess Open() { return HttpKeyAccess{.open = true}; }
HttpKeyAccess Needs(uint8_t right, std::string_view model = {}) {
  HttpKeyAccess access;
  access.right = right;
  if (!model.empty()) {
    // An undecodable name matches no glob but "*" (the route then answers 400 itself).
    access.model = PercentDecode(model).value_or(std::string(model));
  }
  return access;
}

// /v2/models/{m}[/versions/{v}][/<action>...]: `rest` is what follows the model segment.
HttpKeyAccess ModelRoute(std::string_view method, std::string_view model, std::span<const std::string_view> rest) {
  if (rest.size() >= 2 && rest[0] == "versions") rest = rest.subspan(2);
  if (rest.empty()) return Needs(kRightRead, model);
  const std::string_view action = rest[0];
  if (action == "infer" || action == "generate" || action == "generate_stream") return Needs(kRightInfer, model);
  if (action == "trace") return Needs(method == "POST" ? kRightAdmin : kRightRead, model);
  return Needs(kRightRead, model);  // ready, config, stats, diagnosis, ...
}

HttpKeyAccess V2Route(std::string_view method, std::span<const std::string_view> p) {
  // p[0] == "v2"
  if (p.size() == 1) return Read();  // server metadata
  const std::string_view area = p[1];
  if (area == "health") return Open();
  if (area == "console") return HttpKeyAccess{.every_model = true};  // the console stream
  if (area == "logging") return Needs(kRightAdmin);
  if (area == "trace") return Needs(method == "POST" ? kRightAdmin : kRightRead);
  if (area == "systemsharedmemory" || area == "cudasharedmemory") {
    const std::string_view action = p.back();
    return Needs(action == "register" || action == "unregister" ? kRightAdmin : kRightRead);
  }
  if (area == "repository") {
    // /v2/repository/models/{m}/{load,unload,canary/promote}; the index is a filtered read.
    if (p.size() >= 5 && p[2] == "models") return Needs(kRightAdmin, p[3]);
    return Read();
  }
  if (area == "models") {
    if (p.size() == 2 || (p.size() == 3 && p[2] == "stats")) return HttpKeyAccess{.every_model = true};
    return ModelRoute(method, p[2], p.subspan(3));
  }
  return Read();
}

HttpKeyAccess V1Route(std::span<const std::string_view> p) {
  // p[0] == "v1"
  if (p.size() >= 2 && (p[1] == "completions" || p[1] == "chat" || p[1] == "embeddings")) {
    return Needs(kRightInfer);  // the model is in the body: the route checks it
  }
  if (p.size() == 3 && p[1] == "models") return Needs(kRightRead, p[2]);
  return Read();  // /v1/models: filtered to the key's models
}

bool EqualsLower(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i] >= 'A' && text[i] <= 'Z' ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
    if (c != lower[i]) return false;
  }
  return true;
}

}  // namespace

HttpKeyAccess HttpKeyAccessFor(std::string_view method, std::string_view path) {
  if (path == "/" || path == "/console" || path.starts_with("/console/")) return Open();
  if (path == "/metrics") return HttpKeyAccess{.every_model = true};
  const std::vector<std::string_view> parts = SplitPath(path);
  if (parts.empty()) return Read();
  if (parts[0] == "v2") return V2Route(method, parts);
  if (parts[0] == "v1") return V1Route(parts);
  return Read();
}

std::optional<std::string> KeyInQueryString(std::string_view target) {
  const size_t question = target.find('?');
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    std::string_view name = pair.substr(0, pair.find('='));
    const std::optional<std::string> decoded = PercentDecode(name);
    if (decoded) name = *decoded;
    for (std::string_view banned : {"api_key", "key", "access_token"}) {
      if (EqualsLower(name, banned)) return std::string(banned);
    }
  }
  return std::nullopt;
}

absl::Status CheckHttpApiKey(ApiKeyStore& store, HttpRequest& request) {
  const HttpKeyAccess access = HttpKeyAccessFor(request.method, request.path());
  if (std::optional<std::string> parameter = KeyInQueryString(request.target)) {
    store.CountAuthFailure(AuthFailure::kQueryString);
    absl::Status refused = absl::InvalidArgumentError(StrCat(
        "API keys are not accepted in the query string (parameter '", *parameter, "'): send 'Authorization: Bearer <key>'"));
    AuditApiKeyRefusal(store, request.Header("authorization"), request.peer, "http", access.right,
                       access.model.value_or(""), refused);
    return refused;
  }
  if (access.open) {
    request.api_key.reset();  // request storage is reused: no grant left from an earlier request
    return absl::OkStatus();
  }
  absl::StatusOr<ApiKeyGrantPtr> grant = store.Authorize(
      request.Header("authorization"), access.right,
      access.model ? std::optional<std::string_view>(*access.model) : std::nullopt, access.every_model);
  if (!grant.ok()) {
    AuditApiKeyRefusal(store, request.Header("authorization"), request.peer, "http", access.right,
                       access.model.value_or(""), grant.status());
    return grant.status();
  }
  request.api_key = std::move(*grant);
  return absl::OkStatus();
}

HttpResponse ApiKeyDeniedResponse(HttpResponse rendered, const absl::Status& status) {
  if (status.code() == absl::StatusCode::kUnauthenticated) rendered.headers.emplace_back("WWW-Authenticate", "Bearer");
  if (std::optional<int> seconds = RetryAfterSeconds(status)) {
    bool replaced = false;
    for (auto& [name, value] : rendered.headers) {
      if (name == "Retry-After") {
        value = std::to_string(*seconds);
        replaced = true;
      }
    }
    if (!replaced) rendered.headers.emplace_back("Retry-After", std::to_string(*seconds));
  }
  return rendered;
}

}  // namespace infera
