// The OpenAI request parsers: fields, limits, hostile bodies.
#include "openai/openai_requests.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::openai {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OpenAiRequestsTest, ParsesCompletionsWithTextOrTokenIds) {
  auto r = ParseCompletionRequest(
      R"({"model": "m", "prompt": "hi", "max_tokens": 5, "temperature": 0, "stop": "\n",
          "ignore_eos": true, "seed": 3, "stream": true, "stream_options": {"include_usage": true}})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->prompts.size(), 1u);
  EXPECT_EQ(r->prompts[0].text, "hi");
  EXPECT_EQ(r->n, 1);
  EXPECT_EQ(r->sampling.max_tokens, 5);
  EXPECT_TRUE(r->sampling.greedy());
  EXPECT_THAT(r->sampling.stop, ElementsAre("\n"));
  EXPECT_TRUE(r->sampling.ignore_eos);
  EXPECT_TRUE(r->stream && r->include_usage);
  auto ids = ParseCompletionRequest(R"({"model": "m", "prompt": [1, 2, 3], "logprobs": 1})");
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->prompts.size(), 1u);
  EXPECT_THAT(ids->prompts[0].ids, ElementsAre(1, 2, 3));
  EXPECT_TRUE(ids->sampling.logprobs);
  EXPECT_EQ(ids->sampling.top_logprobs, 1);
  EXPECT_EQ(ids->sampling.max_tokens, 16);
}

TEST(OpenAiRequestsTest, RejectsBadFieldsByName) {
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"prompt": "x"})").status().message()), HasSubstr("'model'"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": "x", "top_p": 0})").status().message()),
              HasSubstr("top_p"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": "x", "n": 0})").status().message()),
              HasSubstr("'n' must be in [1, 16]"));
  EXPECT_FALSE(ParseCompletionRequest(R"({"model": "m"})").ok());
  EXPECT_FALSE(ParseCompletionRequest("not json").ok());
  EXPECT_FALSE(ParseChatRequest(R"({"model": "m", "messages": []})").ok());
}

std::string CompletionError(std::string_view fields) {
  return std::string(
      ParseCompletionRequest(std::string(R"({"model": "m", "prompt": "x", )") + std::string(fields) + "}")
          .status()
          .message());
}

// Integer fields are bounded at parse time, so nothing downstream adds to a huge value.
TEST(OpenAiRequestsTest, IntegerFieldsAtAndPastTheirLimits) {
  EXPECT_TRUE(ParseCompletionRequest(R"({"model": "m", "prompt": "x", "max_tokens": 16777216})").ok());
  EXPECT_THAT(CompletionError(R"("max_tokens": 16777217)"), HasSubstr("'max_tokens' must be at most 16777216"));
  EXPECT_THAT(CompletionError(R"("max_tokens": 9223372036854775807)"), HasSubstr("'max_tokens' must be at most"));
  EXPECT_THAT(CompletionError(R"("max_completion_tokens": 9223372036854775807)"), HasSubstr("'max_tokens'"));
  EXPECT_THAT(CompletionError(R"("max_tokens": 18446744073709551615)"), HasSubstr("'max_tokens' must be an integer"));
  EXPECT_THAT(CompletionError(R"("top_k": 9223372036854775807)"), HasSubstr("'top_k' must be at most"));
  EXPECT_THAT(CompletionError(R"("priority": 4294967296)"), HasSubstr("'priority' must be a 32-bit integer"));
  std::string ids = R"("stop_token_ids": [1)";
  for (int i = 0; i < 1024; ++i) ids += ",1";
  EXPECT_THAT(CompletionError(ids + "]"), HasSubstr("'stop_token_ids' takes at most 1024 ids"));
}

// Issue 13 finding 1: a deeply nested body overflowed the parser's stack.
TEST(OpenAiRequestsTest, DeepNestingIsAnErrorNamingTheLimit) {
  const std::string deep = R"({"model": "m", "prompt": )" + std::string(250000, '[') + "1" +
                           std::string(250000, ']') + "}";
  EXPECT_THAT(std::string(ParseCompletionRequest(deep).status().message()), HasSubstr("100 levels"));
  EXPECT_THAT(std::string(ParseChatRequest(deep).status().message()), HasSubstr("100 levels"));
}

TEST(OpenAiRequestsTest, ParsesChatMessagesWithTextParts) {
  auto r = ParseChatRequest(
      R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
          {"type": "text", "text": "b"}]}], "max_completion_tokens": 7, "logprobs": true})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->messages[0].content, "ab");
  EXPECT_EQ(r->sampling.max_tokens, 7);
  EXPECT_TRUE(r->max_tokens_set);
  EXPECT_TRUE(r->sampling.logprobs);
}

// Issue 13 finding 11: a request naming invalid UTF-8 is refused by the JSON reader.
TEST(OpenAiRequestsTest, InvalidUtf8InTheBodyIsRefused) {
  EXPECT_THAT(std::string(ParseCompletionRequest("{\"model\": \"\xff\", \"prompt\": \"x\"}").status().message()),
              HasSubstr("encoding"));
}

TEST(OpenAiRequestsTest, BatchedPromptsAndN) {
  auto r = ParseCompletionRequest(R"({"model": "m", "prompt": ["a", [5, 6], "b"], "n": 2, "best_of": 2})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->prompts.size(), 3u);
  EXPECT_EQ(r->prompts[0].text, "a");
  EXPECT_THAT(r->prompts[1].ids, ElementsAre(5, 6));
  EXPECT_EQ(r->prompts[2].text, "b");
  EXPECT_EQ(r->n, 2);
  // A list of token ids is one prompt.
  auto one = ParseCompletionRequest(R"({"model": "m", "prompt": [5, 6]})");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->prompts.size(), 1u);
  std::string many = R"(["x")";
  for (int i = 1; i < kMaxPrompts; ++i) many += R"(,"x")";
  EXPECT_TRUE(ParseCompletionRequest(R"({"model": "m", "prompt": )" + many + "]}").ok());
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": )" + many + R"(,"x"]})").status().message()),
              HasSubstr("at most 64 prompts"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": )" + many + R"(], "n": 3})").status().message()),
              HasSubstr("at most 128 choices"));
  EXPECT_THAT(CompletionError(R"("n": 17)"), HasSubstr("'n' must be in [1, 16]"));
  EXPECT_THAT(CompletionError(R"("n": 2, "best_of": 3)"), HasSubstr("'best_of' must equal n"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": ["a", 1]})").status().message()),
              HasSubstr("'prompt'"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": [[1], []]})").status().message()),
              HasSubstr("'prompt'"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": []})").status().message()),
              HasSubstr("'prompt'"));
  auto chat = ParseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "n": 3})");
  ASSERT_TRUE(chat.ok());
  EXPECT_EQ(chat->n, 3);
}

TEST(OpenAiRequestsTest, LogprobsFields) {
  auto r = ParseCompletionRequest(R"({"model": "m", "prompt": "x", "logprobs": 20, "return_tokens_as_token_ids": true})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->sampling.logprobs);
  EXPECT_EQ(r->sampling.top_logprobs, 20);
  EXPECT_TRUE(r->return_tokens_as_token_ids);
  EXPECT_THAT(CompletionError(R"("logprobs": 21)"), HasSubstr("'logprobs' must be an integer in [0, 20]"));
  EXPECT_THAT(CompletionError(R"("logprobs": -1)"), HasSubstr("'logprobs'"));
  EXPECT_TRUE(ParseCompletionRequest(R"({"model": "m", "prompt": "x", "logprobs": null})").ok());
  auto chat = ParseChatRequest(
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 5})");
  ASSERT_TRUE(chat.ok()) << chat.status();
  EXPECT_EQ(chat->sampling.top_logprobs, 5);
  EXPECT_THAT(std::string(ParseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
                                               "top_logprobs": 2})").status().message()),
              HasSubstr("needs 'logprobs': true"));
  EXPECT_THAT(std::string(ParseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
                                               "logprobs": true, "top_logprobs": 21})").status().message()),
              HasSubstr("'top_logprobs' must be an integer in [0, 20]"));
}

// Found by fuzz/fuzz_openai_protocol: with RapidJSON's full-precision number parsing this
// body read outside RapidJSON's power-of-ten table (SIGSEGV, the whole server).
TEST(OpenAiRequestsTest, LongZeroRunNumberDoesNotCrashTheParser) {
  const std::string number = "0." + std::string(370, '0') + "8899831653300944850";
  auto request = ParseCompletionRequest(R"({"model": "m", "prompt": "a", "temperature": )" + number + "}");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_GE(request->sampling.temperature, 0.0);
  EXPECT_LT(request->sampling.temperature, 1e-300);
}

}  // namespace
}  // namespace infera::openai
