// RouteTable: a server's HTTP routes, declared once as {name, methods, path patterns,
// handler} and matched once per request.
//
// Matching: the request's path (percent-encoded, before '?') is split into segments once
// (no allocation up to 8 segments); the routes are tried in the order they were added,
// and the first whose path matches decides — that order is the precedence. When its
// methods include the request's, its handler gets the request; otherwise the table
// answers 405 with `Allow` (the route's methods). A path no route matches is 404
// ("no route for <path>"); a server that wants its own answer adds a last route for
// PathPattern::Any().
//
// Path patterns:
//   Exact("/metrics")              the path byte for byte
//   Prefix("/v1/")                 the path starts with it
//   Segments("/v2/models/*/trace/setting"), Segments("/v2/repository/**")
//                                  the path's segments as every route splits them
//                                  (url_path.h: empty segments dropped, so "//v2/x/" is
//                                  {v2, x}): literal segments, `*` any one segment, a
//                                  final `**` any number of them (none included)
//   Any()                          every path
//
// HEAD reaches routes as GET (HttpServer), so a method set with GET serves HEAD too.
//
// Thread-safety: built before the server starts, then read-only: Dispatch runs
// concurrently on every I/O thread.
//
// Usage:
//   RouteTable routes;
//   routes.Add("metrics", MethodSet::Any(), {PathPattern::Exact("/metrics")}, metrics_handler);
//   routes.Add("kserve", MethodSet::Any(), {PathPattern::Any()}, kserve_handler);
//   HttpServer::Start(options, [routes = std::move(routes)](HttpRequest&& r, HttpResponder w) {
//     routes.Dispatch(std::move(r), std::move(w));
//   });
#ifndef INFERA_HTTP_ROUTE_TABLE_H_
#define INFERA_HTTP_ROUTE_TABLE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_server.h"
#include "http/url_path.h"

namespace infera {

// A set of request methods (the standard ones), or any method.
class MethodSet {
 public:
  static MethodSet Any() { return MethodSet(kAll); }
  // `methods`: "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS" (others abort).
  static MethodSet Of(std::initializer_list<std::string_view> methods);

  bool Contains(std::string_view method) const;
  bool any() const { return bits_ == kAll; }
  // The methods in canonical order, joined by `separator` ("GET, POST").
  std::string Join(std::string_view separator) const;

 private:
  static constexpr uint8_t kAll = 0xff;
  explicit MethodSet(uint8_t bits) : bits_(bits) {}
  uint8_t bits_;
};

class PathPattern {
 public:
  static PathPattern Exact(std::string path);
  static PathPattern Prefix(std::string prefix);
  // `pattern` starts with '/'; see above.
  static PathPattern Segments(std::string_view pattern);
  static PathPattern Any();

  // `segments` is SplitPathInline(path).
  bool Matches(std::string_view path, const PathSegments& segments) const;

 private:
  enum class Kind : uint8_t { kExact, kPrefix, kSegments, kAny };
  PathPattern(Kind kind, std::string text) : kind_(kind), text_(std::move(text)) {}

  Kind kind_;
  std::string text_;                  // kExact, kPrefix
  std::vector<std::string> parts_;    // kSegments: literal segments, "*" for any one
  bool any_tail_ = false;             // kSegments: a final "**"
};

class RouteTable {
 public:
  // Adds a route after those already added (lower precedence). `name` says what it is
  // (tests, logs). Returns *this.
  RouteTable& Add(std::string name, MethodSet methods, std::vector<PathPattern> paths, HttpHandler handler);

  // Answers `request` as described above.
  void Dispatch(HttpRequest&& request, HttpResponder responder) const;

  // The name of the route whose path matches `path` first, or "" (tests).
  std::string_view RouteFor(std::string_view path) const;

 private:
  struct Route {
    std::string name;
    MethodSet methods;
    std::vector<PathPattern> paths;
    HttpHandler handler;
  };
  const Route* Find(std::string_view path) const;

  std::vector<Route> routes_;
};

}  // namespace infera

#endif  // INFERA_HTTP_ROUTE_TABLE_H_
