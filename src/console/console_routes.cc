#include "console/console_routes.h"

#include <string>
#include <utility>

#include "console/console_assets.h"
#include "http/http_status.h"

namespace infera {
namespace {

constexpr std::string_view kStreamPath = "/v2/console/stream";

void AddSecurityHeaders(HttpResponse& response) {
  response.headers.emplace_back("Content-Security-Policy", std::string(kConsoleContentSecurityPolicy));
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
  response.headers.emplace_back("X-Frame-Options", "DENY");
}

}  // namespace

HttpResponse ConsoleStaticResponse(const HttpRequest& request) {
  const std::string_view path = request.path();
  const bool get = request.method == "GET";
  const bool head = request.method == "HEAD";
  if (path == "/") {
    if (!get && !head) {
      HttpResponse r = ErrorResponse(405, "/ takes GET or HEAD");
      r.headers.emplace_back("Allow", "GET, HEAD");
      return r;
    }
    return HttpResponse{302, "text/plain; charset=utf-8", "", {{"Location", "/console"}}};
  }
  std::string_view name;
  if (path == "/console" || path == "/console/") {
    name = "index.html";
  } else if (path.substr(0, 9) == "/console/") {
    name = path.substr(9);
  }
  const EmbeddedAsset* asset = name.empty() ? nullptr : FindConsoleAsset(name);
  if (asset == nullptr) {
    HttpResponse r = ErrorResponse(404, "no such console file");
    AddSecurityHeaders(r);
    return r;
  }
  if (!get && !head) {
    HttpResponse r = ErrorResponse(405, "console files take GET or HEAD");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  HttpResponse r{200, std::string(asset->content_type), "", {}};
  r.headers.emplace_back("ETag", std::string(asset->etag));
  r.headers.emplace_back("Cache-Control", "no-cache");
  AddSecurityHeaders(r);
  const std::optional<std::string_view> match = request.Header("if-none-match");
  if (match && (*match == asset->etag || *match == "*" ||
                match->find(asset->etag) != std::string_view::npos)) {
    r.status = 304;
    return r;
  }
  if (get) r.body = std::string(asset->bytes);
  return r;
}

bool ConsoleRoutes::Matches(std::string_view path) {
  return path == "/" || path == "/console" || path.substr(0, 9) == "/console/" || path == kStreamPath;
}

void ConsoleRoutes::Handle(HttpRequest request, HttpResponder responder) const {
  if (request.path() == kStreamPath) return stream_.Subscribe(request, std::move(responder));
  std::move(responder).Send(ConsoleStaticResponse(request));
}

}  // namespace infera
