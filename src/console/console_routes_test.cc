#include "console/console_routes.h"

#include <string>

#include "console/console_assets.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

HttpRequest Request(std::string method, std::string target) {
  HttpRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  return r;
}

std::string HeaderOf(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(ConsoleRoutesTest, RootRedirectsToConsole) {
  HttpResponse r = ConsoleStaticResponse(Request("GET", "/"));
  EXPECT_EQ(r.status, 302);
  EXPECT_EQ(HeaderOf(r, "Location"), "/console");
  EXPECT_EQ(ConsoleStaticResponse(Request("POST", "/")).status, 405);
}

TEST(ConsoleRoutesTest, ServesThePageWithSecurityAndCacheHeaders) {
  for (const char* path : {"/console", "/console/", "/console/index.html", "/console?x=1"}) {
    HttpResponse r = ConsoleStaticResponse(Request("GET", path));
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
    EXPECT_EQ(r.body, FindConsoleAsset("index.html")->bytes);
    EXPECT_EQ(HeaderOf(r, "Content-Security-Policy"), kConsoleContentSecurityPolicy);
    EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-cache");
    EXPECT_EQ(HeaderOf(r, "ETag"), FindConsoleAsset("index.html")->etag);
    EXPECT_EQ(HeaderOf(r, "X-Content-Type-Options"), "nosniff");
  }
  // The policy names no other origin.
  EXPECT_EQ(std::string(kConsoleContentSecurityPolicy).find("http"), std::string::npos);
  EXPECT_EQ(std::string(kConsoleContentSecurityPolicy).find('*'), std::string::npos);
}

TEST(ConsoleRoutesTest, HeadHasNoBodyAndMatchingEtagIsNotModified) {
  HttpResponse head = ConsoleStaticResponse(Request("HEAD", "/console/console.js"));
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(head.content_type, "text/javascript; charset=utf-8");
  HttpRequest conditional = Request("GET", "/console/console.js");
  conditional.headers.emplace_back("if-none-match", std::string(FindConsoleAsset("console.js")->etag));
  HttpResponse r = ConsoleStaticResponse(conditional);
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  conditional.headers[0].second = "\"0000000000000000\"";
  EXPECT_EQ(ConsoleStaticResponse(conditional).status, 200);
}

TEST(ConsoleRoutesTest, UnknownAndTraversalPathsAre404) {
  for (const char* path : {"/console/nope.js", "/console/../v2/health/ready", "/console/..%2fCMakeLists.txt",
                           "/console//console.js", "/console/%2e%2e/etc/passwd", "/console/index.html/"}) {
    HttpResponse r = ConsoleStaticResponse(Request("GET", path));
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.body.find("CMake"), std::string::npos);
  }
}

TEST(ConsoleRoutesTest, OtherMethodsAre405WithAllow) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH"}) {
    HttpResponse r = ConsoleStaticResponse(Request(method, "/console/console.js"));
    EXPECT_EQ(r.status, 405) << method;
    EXPECT_EQ(HeaderOf(r, "Allow"), "GET, HEAD");
  }
}

TEST(ConsoleRoutesTest, MatchesOnlyItsPaths) {
  EXPECT_TRUE(ConsoleRoutes::Matches("/"));
  EXPECT_TRUE(ConsoleRoutes::Matches("/console"));
  EXPECT_TRUE(ConsoleRoutes::Matches("/console/x"));
  EXPECT_TRUE(ConsoleRoutes::Matches("/v2/console/stream"));
  EXPECT_FALSE(ConsoleRoutes::Matches("/consoles"));
  EXPECT_FALSE(ConsoleRoutes::Matches("/v2/models/console"));
  EXPECT_FALSE(ConsoleRoutes::Matches("/v2"));
}

}  // namespace
}  // namespace infera
