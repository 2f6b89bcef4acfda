#include "http/route_table.h"

#include <array>
#include <utility>

#include "common/check.h"
#include "common/str_cat.h"
#include "http/http_status.h"

namespace infera {
namespace {

constexpr std::array<std::string_view, 6> kMethods = {"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"};

}  // namespace

MethodSet MethodSet::Of(std::initializer_list<std::string_view> methods) {
  uint8_t bits = 0;
  for (std::string_view method : methods) {
    size_t i = 0;
    while (i < kMethods.size() && kMethods[i] != method) ++i;
    INFERA_CHECK(i < kMethods.size()) << "unknown HTTP method '" << method << "' in a route";
    bits = static_cast<uint8_t>(bits | (1u << i));
  }
  return MethodSet(bits);
}

bool MethodSet::Contains(std::string_view method) const {
  if (bits_ == kAll) return true;
  for (size_t i = 0; i < kMethods.size(); ++i) {
    if ((bits_ & (1u << i)) && kMethods[i] == method) return true;
  }
  return false;
}

std::string MethodSet::Join(std::string_view separator) const {
  if (bits_ == kAll) return "any";
  std::string joined;
  for (size_t i = 0; i < kMethods.size(); ++i) {
    if (!(bits_ & (1u << i))) continue;
    if (!joined.empty()) joined.append(separator);
    joined.append(kMethods[i]);
  }
  return joined;
}

PathPattern PathPattern::Exact(std::string path) { return PathPattern(Kind::kExact, std::move(path)); }

PathPattern PathPattern::Prefix(std::string prefix) { return PathPattern(Kind::kPrefix, std::move(prefix)); }

PathPattern PathPattern::Segments(std::string_view pattern) {
  INFERA_CHECK(!pattern.empty() && pattern[0] == '/') << "route pattern '" << pattern << "' must start with '/'";
  PathPattern result(Kind::kSegments, std::string(pattern));
  for (std::string_view part : SplitPath(pattern)) result.parts_.emplace_back(part);
  if (!result.parts_.empty() && result.parts_.back() == "**") {
    result.parts_.pop_back();
    result.any_tail_ = true;
  }
  for (const std::string& part : result.parts_) {
    INFERA_CHECK(part != "**") << "route pattern '" << pattern << "': '**' only at the end";
  }
  return result;
}

PathPattern PathPattern::Any() { return PathPattern(Kind::kAny, ""); }

bool PathPattern::Matches(std::string_view path, const PathSegments& segments) const {
  switch (kind_) {
    case Kind::kExact:
      return path == text_;
    case Kind::kPrefix:
      return path.substr(0, text_.size()) == text_;
    case Kind::kAny:
      return true;
    case Kind::kSegments:
      break;
  }
  if (any_tail_ ? segments.size() < parts_.size() : segments.size() != parts_.size()) return false;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (parts_[i] != "*" && parts_[i] != segments[i]) return false;
  }
  return true;
}

RouteTable& RouteTable::Add(std::string name, MethodSet methods, std::vector<PathPattern> paths,
                            HttpHandler handler) {
  INFERA_CHECK(handler != nullptr) << "route '" << name << "' has no handler";
  routes_.push_back(Route{std::move(name), methods, std::move(paths), std::move(handler)});
  return *this;
}

const RouteTable::Route* RouteTable::Find(std::string_view path) const {
  const PathSegments segments = SplitPathInline(path);
  for (const Route& route : routes_) {
    for (const PathPattern& pattern : route.paths) {
      if (pattern.Matches(path, segments)) return &route;
    }
  }
  return nullptr;
}

void RouteTable::Dispatch(HttpRequest&& request, HttpResponder responder) const {
  const Route* route = Find(request.path());
  if (route == nullptr) {
    return std::move(responder).Send(ErrorResponse(404, StrCat("no route for ", request.path())));
  }
  if (!route->methods.Contains(request.method)) {
    HttpResponse response = ErrorResponse(405, StrCat("method not allowed; use ", route->methods.Join(" or ")));
    response.headers.emplace_back("Allow", route->methods.Join(", "));
    return std::move(responder).Send(std::move(response));
  }
  route->handler(std::move(request), std::move(responder));
}

std::string_view RouteTable::RouteFor(std::string_view path) const {
  const Route* route = Find(path);
  return route == nullptr ? std::string_view() : std::string_view(route->name);
}

}  // namespace infera
