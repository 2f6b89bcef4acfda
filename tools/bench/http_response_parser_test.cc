#include "tools/bench/http_response_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace infera::bench {
namespace {

using State = HttpResponseParser::State;

// Feeds `text` in pieces of `piece` bytes; returns the final state.
State FeedInPieces(HttpResponseParser& parser, std::string_view text, size_t piece,
                   size_t* total_used = nullptr) {
  size_t offset = 0;
  State state = State::kNeedMore;
  while (offset < text.size() && state == State::kNeedMore) {
    const size_t n = std::min(piece, text.size() - offset);
    size_t used = 0;
    state = parser.Feed(text.data() + offset, n, &used);
    offset += used;
    if (used < n) break;
  }
  if (total_used) *total_used = offset;
  return state;
}

constexpr char kSimple[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}";

TEST(HttpResponseParserTest, ContentLengthBodyInEveryPieceSize) {
  for (size_t piece : {1, 2, 3, 7, 64, 4096}) {
    HttpResponseParser parser(/*keep_body=*/true);
    size_t used = 0;
    ASSERT_EQ(FeedInPieces(parser, kSimple, piece, &used), State::kDone) << piece;
    EXPECT_EQ(used, sizeof(kSimple) - 1);
    EXPECT_EQ(parser.head().status, 200);
    EXPECT_EQ(parser.head().content_length, 11);
    EXPECT_EQ(parser.head().content_type, "application/json");
    EXPECT_TRUE(parser.head().keep_alive);
    EXPECT_EQ(parser.body(), "{\"ok\":true}");
  }
}

TEST(HttpResponseParserTest, BodyIsCountedButNotKeptUnlessAsked) {
  HttpResponseParser parser(/*keep_body=*/false);
  ASSERT_EQ(FeedInPieces(parser, kSimple, 5), State::kDone);
  EXPECT_EQ(parser.body_bytes(), 11);
  EXPECT_TRUE(parser.body().empty());
}

TEST(HttpResponseParserTest, LeavesTheNextResponseUnconsumedAndResets) {
  const std::string two = std::string(kSimple) + kSimple;
  HttpResponseParser parser(true);
  size_t used = 0;
  ASSERT_EQ(parser.Feed(two.data(), two.size(), &used), State::kDone);
  EXPECT_EQ(used, sizeof(kSimple) - 1);
  parser.Reset();
  size_t used2 = 0;
  ASSERT_EQ(parser.Feed(two.data() + used, two.size() - used, &used2), State::kDone);
  EXPECT_EQ(used2, sizeof(kSimple) - 1);
}

TEST(HttpResponseParserTest, ChunkedWithExtensionsAndTrailers) {
  const std::string text =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n";
  for (size_t piece : {1, 4, 1000}) {
    HttpResponseParser parser(true);
    std::vector<std::string> pieces;
    parser.on_body_data = [&](std::string_view data) { pieces.emplace_back(data); };
    ASSERT_EQ(FeedInPieces(parser, text, piece), State::kDone) << piece;
    EXPECT_TRUE(parser.head().chunked);
    EXPECT_EQ(parser.body(), "hello world");
    if (piece == 1000) {
      EXPECT_THAT(pieces, ::testing::ElementsAre("hello", " world"));
    }
  }
}

TEST(HttpResponseParserTest, BinaryTensorHeaders) {
  const std::string text =
      "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n"
      "inference-header-content-length: 3\r\ncontent-length: 5\r\n\r\n{}\n\x01\x02";
  HttpResponseParser parser(true);
  ASSERT_EQ(FeedInPieces(parser, text, 3), State::kDone);
  ASSERT_TRUE(parser.head().inference_header_length.has_value());
  EXPECT_EQ(*parser.head().inference_header_length, 3u);
  EXPECT_EQ(parser.body().size(), 5u);
}

TEST(HttpResponseParserTest, ConnectionCloseAndHttp10) {
  HttpResponseParser parser(true);
  ASSERT_EQ(FeedInPieces(parser, "HTTP/1.1 429 Too Many\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 9),
            State::kDone);
  EXPECT_EQ(parser.head().status, 429);
  EXPECT_FALSE(parser.head().keep_alive);
  parser.Reset();
  ASSERT_EQ(FeedInPieces(parser, "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 100), State::kDone);
  EXPECT_FALSE(parser.head().keep_alive);
  parser.Reset();
  ASSERT_EQ(FeedInPieces(parser, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", 100),
            State::kDone);
  EXPECT_TRUE(parser.head().keep_alive);
}

TEST(HttpResponseParserTest, BodyUntilCloseCompletesOnEof) {
  HttpResponseParser parser(true);
  EXPECT_EQ(FeedInPieces(parser, "HTTP/1.1 200 OK\r\n\r\nabc", 100), State::kNeedMore);
  EXPECT_EQ(parser.FeedEof(), State::kDone);
  EXPECT_EQ(parser.body(), "abc");
  EXPECT_FALSE(parser.head().keep_alive);
}

TEST(HttpResponseParserTest, TruncatedResponseIsAnErrorOnEof) {
  HttpResponseParser parser(true);
  EXPECT_EQ(FeedInPieces(parser, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 100),
            State::kNeedMore);
  EXPECT_EQ(parser.FeedEof(), State::kError);
  EXPECT_THAT(parser.error(), ::testing::HasSubstr("middle"));
  HttpResponseParser fresh(true);
  EXPECT_EQ(fresh.FeedEof(), State::kError);
  EXPECT_THAT(fresh.error(), ::testing::HasSubstr("before a response"));
}

TEST(HttpResponseParserTest, InterimResponsesAreSkipped) {
  HttpResponseParser parser(true);
  ASSERT_EQ(FeedInPieces(parser, std::string("HTTP/1.1 100 Continue\r\n\r\n") + kSimple, 6),
            State::kDone);
  EXPECT_EQ(parser.head().status, 200);
  EXPECT_EQ(parser.body(), "{\"ok\":true}");
}

TEST(HttpResponseParserTest, NoBodyFor204) {
  HttpResponseParser parser(true);
  EXPECT_EQ(FeedInPieces(parser, "HTTP/1.1 204 No Content\r\n\r\n", 100), State::kDone);
}

TEST(HttpResponseParserTest, MalformedInputIsAnError) {
  for (const char* bad : {"HTTP/2 200 OK\r\n\r\n", "HTTX/1.1 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}) {
    HttpResponseParser parser(true);
    EXPECT_EQ(FeedInPieces(parser, bad, 100), State::kError) << bad;
    EXPECT_FALSE(parser.error().empty());
  }
  HttpResponseParser parser(true);
  EXPECT_EQ(FeedInPieces(parser, "HTTP/1.1 200 OK\r\nX: " + std::string(70000, 'a'), 4096),
            State::kError);
}

}  // namespace
}  // namespace infera::bench
