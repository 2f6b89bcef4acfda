// ConsoleRoutes: the web console on the HTTP port (docs/console.md).
//
//   GET /                     302 Location: /console
//   GET|HEAD /console, /console/, /console/index.html   the page
//   GET|HEAD /console/<file>  an embedded asset (console_assets.h); unknown: 404;
//                             other methods: 405 (Allow: GET, HEAD)
//   GET /v2/console/stream    the statistics stream (ConsoleStream)
//
// Assets carry their content type, ETag (If-None-Match -> 304), Cache-Control: no-cache
// and a Content-Security-Policy that allows this origin only.
//
// Thread-safe.
#ifndef INFERA_CONSOLE_CONSOLE_ROUTES_H_
#define INFERA_CONSOLE_CONSOLE_ROUTES_H_

#include <string_view>

#include "console/console_stream.h"
#include "http/http_message.h"
#include "http/http_server.h"

namespace infera {

inline constexpr std::string_view kConsoleContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

// The answer to a request for `/`, `/console` or `/console/...` (no stream).
HttpResponse ConsoleStaticResponse(const HttpRequest& request);

class ConsoleRoutes {
 public:
  explicit ConsoleRoutes(ConsoleStream& stream) : stream_(stream) {}

  static bool Matches(std::string_view path);
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  ConsoleStream& stream_;
};

}  // namespace infera

#endif  // INFERA_CONSOLE_CONSOLE_ROUTES_H_
