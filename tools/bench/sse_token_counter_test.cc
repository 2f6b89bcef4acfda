#include "tools/bench/sse_token_counter.h"

#include <gtest/gtest.h>

#include <string>

namespace infera::bench {
namespace {

constexpr char kCompletionStream[] =
    "data: {\"choices\":[{\"index\":0,\"text\":\"\"}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"text\":\"Hello\"}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"text\":\" world\"}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"text\":\"!\",\"finish_reason\":\"length\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7}}\n\n"
    "data: [DONE]\n\n";

TEST(SseTokenCounterTest, CountsTokensAndTimesTheFirst) {
  SseTokenCounter counter;
  const std::string text = kCompletionStream;
  // Feed byte by byte with increasing times: the first token's line ends at its "\n".
  const size_t first_token_end = text.find('\n', text.find("Hello"));
  for (size_t i = 0; i < text.size(); ++i) counter.Feed(std::string_view(&text[i], 1), static_cast<int64_t>(i));
  EXPECT_EQ(counter.first_token_ns(), static_cast<int64_t>(first_token_end));
  EXPECT_EQ(counter.token_events(), 3);
  EXPECT_EQ(counter.tokens(), 4);  // usage wins: "Hello" may be several tokens
  EXPECT_TRUE(counter.done());
  EXPECT_TRUE(counter.error().empty());
}

TEST(SseTokenCounterTest, ChatDeltasAndNoUsage) {
  SseTokenCounter counter;
  counter.Feed("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\r\n\r\n", 5);
  counter.Feed("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\r\n\r\ndata: {\"choices\":[{\"de", 7);
  counter.Feed("lta\":{\"content\":\" there\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n", 9);
  EXPECT_EQ(counter.first_token_ns(), 7);
  EXPECT_EQ(counter.tokens(), 2);
  EXPECT_TRUE(counter.done());
}

TEST(SseTokenCounterTest, ErrorEventsAndReset) {
  SseTokenCounter counter;
  counter.Feed(": comment\nevent: x\ndata: {\"error\":{\"message\":\"engine stopped\"}}\n\n", 1);
  EXPECT_EQ(counter.error(), "engine stopped");
  EXPECT_EQ(counter.tokens(), 0);
  EXPECT_FALSE(counter.done());
  counter.Reset();
  EXPECT_TRUE(counter.error().empty());
  EXPECT_EQ(counter.first_token_ns(), 0);
}

}  // namespace
}  // namespace infera::bench
