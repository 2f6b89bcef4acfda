#include "http/request_parser.h"

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::http_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

struct Parsed {
  boost::beast::error_code ec;
  bool done = false;
  bool head = false;
  bool expects_continue = false;
  std::optional<std::string> problem;
  HttpRequest request;
};

// Parses `bytes` in one put (body included), from an exact-size heap copy so that a
// read past the input is an ASan error.
Parsed Parse(std::string_view bytes) {
  Parsed parsed;
  HeaderPool pool;
  RequestParser parser(&parsed.request, &pool);
  parser.eager(true);
  auto data = std::make_unique<char[]>(bytes.size());
  std::copy(bytes.begin(), bytes.end(), data.get());
  parser.put(boost::asio::buffer(data.get(), bytes.size()), parsed.ec);
  parsed.done = parser.is_done();
  parsed.head = parser.is_head();
  parsed.expects_continue = parser.expects_continue();
  parsed.problem = parser.header_problem();
  return parsed;
}

TEST(RequestParserTest, StoresTheRequestWithLowerCasedHeaderNames) {
  const Parsed parsed = Parse("POST /v2/models/m/infer?x=1 HTTP/1.1\r\nHost: h\r\nX-Spaced: a \t b\t\r\n"
                              "Content-Length: 4\r\n\r\nbody");
  ASSERT_FALSE(parsed.ec) << parsed.ec.message();
  EXPECT_TRUE(parsed.done);
  EXPECT_EQ(parsed.request.method, "POST");
  EXPECT_EQ(parsed.request.target, "/v2/models/m/infer?x=1");
  EXPECT_THAT(parsed.request.headers,
              ElementsAre(Pair("host", "h"), Pair("x-spaced", "a \t b"), Pair("content-length", "4")));
  EXPECT_EQ(parsed.request.body, "body");
  EXPECT_EQ(parsed.problem, std::nullopt);
}

TEST(RequestParserTest, HeadIsStoredAsGetAndExpectContinueIsSeen) {
  Parsed parsed = Parse("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(parsed.request.method, "GET");
  EXPECT_TRUE(parsed.head);
  parsed = Parse("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx");
  EXPECT_TRUE(parsed.expects_continue);
}

// RFC 9112 section 5.2: a field line continued on a line that starts with SP or HTAB.
TEST(RequestParserTest, ObsFoldIsAProblemNamingTheField) {
  for (const std::string_view fold :
       {"X-Folded: a\r\n b\r\n", "X-Folded: a\r\n\tb\r\n", "X-Folded:\r\n b\r\n", "X-Folded: a\r\n \r\n",
        "X-Folded: a\r\n b\r\n  c\r\n"}) {
    const Parsed parsed = Parse("GET / HTTP/1.1\r\nHost: h\r\n" + std::string(fold) + "Accept: */*\r\n\r\n");
    ASSERT_TRUE(parsed.problem.has_value()) << fold;
    EXPECT_THAT(*parsed.problem, HasSubstr("'X-Folded'")) << fold;
    EXPECT_THAT(*parsed.problem, HasSubstr("obs-fold, RFC 9112 section 5.2")) << fold;
  }
  // A fold of the last field, right before the blank line.
  const Parsed last = Parse("GET / HTTP/1.1\r\nHost: h\r\n\t\r\n\r\n");
  ASSERT_TRUE(last.problem.has_value());
  EXPECT_THAT(*last.problem, HasSubstr("'Host'"));
}

TEST(RequestParserTest, ObsFoldInATrailerFieldIsAProblemToo) {
  const Parsed parsed = Parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "4\r\nbody\r\n0\r\nX-Trailer: a\r\n b\r\n\r\n");
  ASSERT_FALSE(parsed.ec) << parsed.ec.message();
  EXPECT_EQ(parsed.request.body, "body");
  ASSERT_TRUE(parsed.problem.has_value());
  EXPECT_THAT(*parsed.problem, HasSubstr("'X-Trailer'"));
}

TEST(RequestParserTest, AmbiguousFramingIsAProblem) {
  const Parsed parsed = Parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx");
  ASSERT_TRUE(parsed.problem.has_value());
  EXPECT_THAT(*parsed.problem, HasSubstr("Content-Length"));
}

TEST(RequestParserTest, TheNextRequestReusesTheHeaderStrings) {
  HttpRequest request;
  HeaderPool pool;
  {
    RequestParser parser(&request, &pool);
    const std::string first = "GET / HTTP/1.1\r\nHost: h\r\nX-Long: " + std::string(100, 'v') + "\r\n\r\n";
    boost::beast::error_code ec;
    parser.put(boost::asio::buffer(first), ec);
    ASSERT_FALSE(ec);
  }
  ASSERT_EQ(request.headers.size(), 2u);
  const size_t capacity = request.headers[1].second.capacity();
  RequestParser parser(&request, &pool);  // returns the headers to the pool
  EXPECT_TRUE(request.headers.empty());
  ASSERT_EQ(pool.size(), 2u);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(std::string_view("GET / HTTP/1.1\r\nHost: h\r\n\r\n")), ec);
  ASSERT_FALSE(ec);
  ASSERT_EQ(request.headers.size(), 1u);
  // The last pooled pair (X-Long's) is taken first.
  EXPECT_EQ(request.headers[0].second.capacity(), capacity);
}

}  // namespace
}  // namespace infera::http_internal
