#include "diagnosis/diagnosis_routes.h"

#include <charconv>
#include <string>
#include <vector>

#include "common/str_cat.h"
#include "diagnosis/diagnosis_json.h"
#include "http/http_status.h"
#include "http/url_path.h"

namespace infera::diagnosis {
namespace {

constexpr std::string_view kAction = "diagnosis";

}  // namespace

absl::StatusOr<int> ParseWindowQuery(std::string_view query) {
  std::optional<int> window;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (key != "window") {
      return absl::InvalidArgumentError(
          StrCat("unknown query parameter '", key.substr(0, 64), "' (diagnosis takes only window=SECONDS)"));
    }
    if (window) return absl::InvalidArgumentError("query parameter 'window' given more than once");
    int parsed = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || parsed < 1 ||
        parsed > kMaxWindowSeconds) {
      return absl::InvalidArgumentError(StrCat("query parameter 'window' must be whole seconds 1..",
                                               kMaxWindowSeconds, ", got '", value.substr(0, 64), "'"));
    }
    window = parsed;
  }
  return window.value_or(kDefaultWindowSeconds);
}

bool DiagnosisRoutes::Matches(std::string_view path) {
  const std::vector<std::string_view> parts = SplitPath(path);
  if (parts.size() < 4 || parts[0] != "v2" || parts[1] != "models" || parts.back() != kAction) return false;
  return parts.size() == 4 || (parts.size() == 6 && parts[3] == "versions");
}

HttpResponse DiagnosisRoutes::Handle(const HttpRequest& request) const {
  if (request.method != "GET") {
    HttpResponse response = ErrorResponse(405, "method not allowed; use GET");
    response.headers.emplace_back("Allow", "GET");
    return response;
  }
  const std::vector<std::string_view> parts = SplitPath(request.path());
  std::optional<std::string> name = PercentDecode(parts[2]);
  if (!name) return ErrorResponse(400, "malformed percent-escape in model name");
  std::optional<int64_t> version;
  if (parts.size() == 6) {
    int64_t parsed = 0;
    auto [end, ec] = std::from_chars(parts[4].data(), parts[4].data() + parts[4].size(), parsed);
    if (ec != std::errc() || end != parts[4].data() + parts[4].size() || parsed < 1) {
      return ErrorResponse(400, StrCat("invalid model version '", parts[4], "' (versions are integers >= 1)"));
    }
    version = parsed;
  }
  const std::string_view target = request.target;
  const size_t question = target.find('?');
  absl::StatusOr<int> window =
      ParseWindowQuery(question == std::string_view::npos ? std::string_view() : target.substr(question + 1));
  if (!window.ok()) return ErrorResponse(window.status());
  absl::StatusOr<DiagnosisSampler::Answer> answer = sampler_.Diagnose(*name, version, *window);
  if (!answer.ok()) return ErrorResponse(answer.status());
  return HttpResponse{200, "application/json",
                      DiagnosisJson(answer->model, answer->version, answer->window, answer->diagnosis), {}};
}

}  // namespace infera::diagnosis
