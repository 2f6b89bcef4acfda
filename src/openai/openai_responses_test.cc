// The OpenAI response bodies, stream chunks, ids and errors, byte for byte.
#include "openai/openai_responses.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "openai/openai_errors.h"

namespace infera::openai {
namespace {

using ::testing::HasSubstr;

TEST(OpenAiResponsesTest, BuildsResponsesAndErrors) {
  ChoiceDelta c;
  c.text = "hi";
  c.finish_reason = FinishReason::kLength;
  EXPECT_EQ(CompletionJson("cmpl-1", 10, "m", {c}, {3, 1, 0}),
            R"({"id":"cmpl-1","object":"text_completion","created":10,"model":"m","choices":[{"index":0,)"
            R"("text":"hi","logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":3,)"
            R"("completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}})");
  EXPECT_THAT(ChatChunkJson("c", 1, "m", c, true), HasSubstr(R"("delta":{"role":"assistant","content":"hi"})"));
  EXPECT_EQ(OpenAiErrorJson(404, "nope"),
            R"({"error":{"message":"nope","type":"NotFoundError","param":null,"code":404}})");
}

// Issue 13 finding 11: error messages echo client bytes; the body must stay JSON.
TEST(OpenAiErrorsTest, ErrorJsonReplacesInvalidUtf8) {
  EXPECT_EQ(OpenAiErrorJson(404, "model 'a\xff' does not exist"),
            "{\"error\":{\"message\":\"model 'a\xef\xbf\xbd' does not exist\",\"type\":\"NotFoundError\","
            "\"param\":null,\"code\":404}}");
}

TEST(OpenAiResponsesTest, WritesTopLogprobsInBothShapes) {
  ChoiceDelta c;
  c.index = 1;
  c.text = "ab";
  c.tokens = {"a", "b"};
  c.token_bytes = {"a", "b"};
  c.logprobs = {-0.5f, -0.25f};
  c.top = {{{"a", "a", -0.5f}, {"c", "c", -1.0f}}, {{"b", "b", -0.25f}, {"d", "d", -2.0f}}};
  c.text_offsets = {0, 1};
  EXPECT_THAT(CompletionChunkJson("cmpl-1", 1, "m", c),
              HasSubstr(R"("index":1,"text":"ab","logprobs":{"tokens":["a","b"],"token_logprobs":[-0.5,-0.25],)"
                        R"("top_logprobs":[{"a":-0.5,"c":-1.0},{"b":-0.25,"d":-2.0}],"text_offset":[0,1]})"));
  EXPECT_THAT(ChatChunkJson("c", 1, "m", c, false),
              HasSubstr(R"("logprobs":{"content":[{"token":"a","logprob":-0.5,"bytes":[97],"top_logprobs":[)"
                        R"({"token":"a","logprob":-0.5,"bytes":[97]},{"token":"c","logprob":-1.0,"bytes":[99]}]},)"));
  ChoiceDelta dup = c;
  dup.top[0][1].token = "a";  // equal texts: the more likely one keeps the key
  EXPECT_THAT(CompletionChunkJson("cmpl-1", 1, "m", dup), HasSubstr(R"("top_logprobs":[{"a":-0.5},{)"));
  ChoiceDelta d = c;
  d.index = 0;
  const std::string two = ChatJson("c", 1, "m", {d, c}, {1, 2, 0});
  EXPECT_THAT(two, HasSubstr(R"("choices":[{"index":0,)"));
  EXPECT_THAT(two, HasSubstr(R"(},{"index":1,)"));
}

TEST(OpenAiErrorsTest, RetryableErrors) {
  EXPECT_THAT(OpenAiErrorJson(503, "loading"), HasSubstr(R"("type":"ServiceUnavailableError")"));
  EXPECT_THAT(OpenAiErrorJson(500, "x"), HasSubstr(R"("type":"InternalServerError")"));
}

TEST(OpenAiResponsesTest, ResponseIdsAreRandom128BitHex) {
  const std::string a = NewResponseId("cmpl-"), b = NewResponseId("cmpl-");
  EXPECT_EQ(a.size(), 5u + 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef", 5), std::string::npos);
  EXPECT_NE(a, b);
}

TEST(OpenAiResponsesTest, ToolCallsInAMessageAndInChunks) {
  ChoiceDelta c;
  c.finish_reason = FinishReason::kStop;
  c.finished_with_tool_calls = true;
  c.tool_calls = {{0, "call_1", "get_weather", R"({"city":"Paris"})"}};
  EXPECT_EQ(ChatJson("c", 1, "m", {c}, {}),
            R"({"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":)"
            R"({"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":)"
            R"({"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"logprobs":null,)"
            R"("finish_reason":"tool_calls"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,)"
            R"("prompt_tokens_details":{"cached_tokens":0}}})");
  // A stream: the call's header (index, id, type, name, empty arguments), then pieces.
  ChoiceDelta head;
  head.tool_calls = {{0, "call_1", "get_weather", ""}};
  EXPECT_THAT(ChatChunkJson("c", 1, "m", head, false),
              HasSubstr(R"("delta":{"content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function",)"
                        R"("function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null)"));
  ChoiceDelta piece;
  piece.tool_calls = {{0, "", "", R"({"city")"}};
  EXPECT_THAT(ChatChunkJson("c", 1, "m", piece, false),
              HasSubstr(R"("tool_calls":[{"index":0,"function":{"arguments":"{\"city\""}}])"));
  // finish "tool_calls" only replaces "stop": a call cut short by max_tokens says length.
  ChoiceDelta cut;
  cut.finish_reason = FinishReason::kLength;
  cut.finished_with_tool_calls = true;
  EXPECT_THAT(ChatChunkJson("c", 1, "m", cut, false), HasSubstr(R"("finish_reason":"length")"));
  // Content next to calls stays a string.
  c.text = "Let me look.";
  EXPECT_THAT(ChatJson("c", 1, "m", {c}, {}), HasSubstr(R"("content":"Let me look.","tool_calls":[)"));
}

}  // namespace
}  // namespace infera::openai
