#include "http/route_table.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

bool Matches(const PathPattern& pattern, std::string_view path) {
  return pattern.Matches(path, SplitPathInline(path));
}

TEST(PathPatternTest, ExactAndPrefixCompareThePathAsSent) {
  EXPECT_TRUE(Matches(PathPattern::Exact("/metrics"), "/metrics"));
  EXPECT_FALSE(Matches(PathPattern::Exact("/metrics"), "/metrics/"));
  EXPECT_FALSE(Matches(PathPattern::Exact("/metrics"), "//metrics"));
  EXPECT_TRUE(Matches(PathPattern::Prefix("/v1/"), "/v1/"));
  EXPECT_TRUE(Matches(PathPattern::Prefix("/v1/"), "/v1/models"));
  EXPECT_FALSE(Matches(PathPattern::Prefix("/v1/"), "/v1"));
  EXPECT_FALSE(Matches(PathPattern::Prefix("/v1/"), "/v10/x"));
  EXPECT_TRUE(Matches(PathPattern::Any(), ""));
  EXPECT_TRUE(Matches(PathPattern::Any(), "http://host/v2"));
}

TEST(PathPatternTest, SegmentsAreSplitAsEveryRouteSplitsThem) {
  const PathPattern one = PathPattern::Segments("/v2/models/*/trace/setting");
  EXPECT_TRUE(Matches(one, "/v2/models/m/trace/setting"));
  EXPECT_TRUE(Matches(one, "//v2/models//m/trace/setting/"));  // empty segments dropped
  EXPECT_TRUE(Matches(one, "/v2/models/trace/trace/setting"));
  EXPECT_FALSE(Matches(one, "/v2/models/trace/setting"));
  EXPECT_FALSE(Matches(one, "/v2/models/m/trace/setting/x"));
  const PathPattern tail = PathPattern::Segments("/v2/repository/**");
  EXPECT_TRUE(Matches(tail, "/v2/repository"));
  EXPECT_TRUE(Matches(tail, "/v2/repository/"));
  EXPECT_TRUE(Matches(tail, "/v2/repository/models/m/load"));
  EXPECT_FALSE(Matches(tail, "/v2/repositoryx"));
  EXPECT_FALSE(Matches(tail, "/v2"));
  // More than the inline 8 segments.
  EXPECT_TRUE(Matches(tail, "/v2/repository/a/b/c/d/e/f/g/h/i"));
}

TEST(MethodSetTest, ContainsAndJoin) {
  const MethodSet get_post = MethodSet::Of({"POST", "GET"});
  EXPECT_TRUE(get_post.Contains("GET"));
  EXPECT_TRUE(get_post.Contains("POST"));
  EXPECT_FALSE(get_post.Contains("get"));  // methods are case-sensitive (RFC 9110 9.1)
  EXPECT_FALSE(get_post.Contains("PUT"));
  EXPECT_EQ(get_post.Join(", "), "GET, POST");
  EXPECT_TRUE(MethodSet::Any().Contains("BREW"));
}

TEST(RouteTableTest, TheFirstRouteWhosePathMatchesDecides) {
  const HttpHandler ignore = [](HttpRequest&&, HttpResponder) {};
  RouteTable routes;
  routes.Add("embeddings", MethodSet::Of({"POST"}), {PathPattern::Exact("/v1/embeddings")}, ignore)
      .Add("openai", MethodSet::Any(), {PathPattern::Exact("/v1"), PathPattern::Prefix("/v1/")}, ignore)
      .Add("fallback", MethodSet::Any(), {PathPattern::Any()}, ignore);
  EXPECT_EQ(routes.RouteFor("/v1/embeddings"), "embeddings");
  EXPECT_EQ(routes.RouteFor("/v1/embeddings/"), "openai");
  EXPECT_EQ(routes.RouteFor("/v1"), "openai");
  EXPECT_EQ(routes.RouteFor("/v2"), "fallback");
  RouteTable empty;
  EXPECT_EQ(empty.RouteFor("/"), "");
}

// A blocking loopback client: sends one request, reads until the server closes.
std::string Exchange(uint16_t port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  EXPECT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string reply;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) reply.append(buffer, static_cast<size_t>(n));
  close(fd);
  return reply;
}

// The table's own answers (404, 405 with Allow) and a route's, over a real socket.
TEST(RouteTableTest, DispatchesOrAnswers404And405ItselfOverASocket) {
  RouteTable routes;
  routes.Add("settings", MethodSet::Of({"GET", "POST"}), {PathPattern::Exact("/settings")},
             [](HttpRequest&& request, HttpResponder responder) {
               std::move(responder).Send(HttpResponse{200, "text/plain", "settings " + request.method, {}});
             });
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&routes](HttpRequest&& request, HttpResponder responder) {
    routes.Dispatch(std::move(request), std::move(responder));
  });
  ASSERT_TRUE(server.ok()) << server.status();
  const uint16_t port = (*server)->port();
  EXPECT_THAT(Exchange(port, "POST /settings HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"),
              HasSubstr("\r\n\r\nsettings POST"));
  // HEAD reaches routes as GET: a GET route serves it (headers only).
  const std::string head = Exchange(port, "HEAD /settings HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(head, HasSubstr("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(head, HasSubstr("Content-Length: 12\r\n"));
  EXPECT_EQ(Exchange(port, "DELETE /settings HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nAllow: GET, POST\r\n"
            "Connection: close\r\nContent-Length: 47\r\n\r\n{\"error\":\"method not allowed; use GET or POST\"}");
  EXPECT_EQ(Exchange(port, "GET /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nConnection: close\r\n"
            "Content-Length: 31\r\n\r\n{\"error\":\"no route for /other\"}");
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace infera
