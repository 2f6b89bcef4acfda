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

// Issue 26 finding 9: every number the parsers read is refused naming its field when
// it is of the wrong kind or out of range; min_tokens past max_tokens and malformed
// logit_bias entries were accepted (ignored) before.
TEST(OpenAiProtocolTest, EveryNumericFieldIsRefusedNamingIt) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("temperature": 1e300)", "temperature"},
      {R"("temperature": "0.5")", "'temperature' must be a number"},
      {R"("top_p": -1e-300)", "top_p"},
      {R"("min_p": 1.5)", "min_p"},
      {R"("presence_penalty": 2.5)", "presence_penalty"},
      {R"("frequency_penalty": -1e300)", "frequency_penalty"},
      {R"("repetition_penalty": 1e300)", "repetition_penalty"},
      {R"("top_k": -2)", "top_k"},
      {R"("top_k": 1.5)", "'top_k' must be an integer"},
      {R"("max_tokens": 1e300)", "'max_tokens' must be an integer"},
      {R"("max_tokens": -1)", "max_tokens"},
      {R"("n": 0)", "'n'"},
      {R"("n": 2.5)", "'n' must be an integer"},
      {R"("best_of": 1e300)", "'best_of' must be an integer"},
      {R"("seed": 1e300)", "'seed' must be an integer"},
      {R"("seed": 18446744073709551616)", "'seed' must be an integer"},
      {R"("logprobs": 1e300)", "'logprobs'"},
      {R"("logprobs": 2.5)", "'logprobs'"},
      {R"("priority": 1e300)", "'priority' must be an integer"},
      {R"("priority": "high")", "'priority' must be an integer"},
      {R"("min_tokens": -1)", "min_tokens must be greater than or equal to 0, got -1."},
      {R"("min_tokens": 17)", "min_tokens must be less than or equal to max_tokens=16, got 17."},
      {R"("min_tokens": 5, "max_tokens": 4)", "min_tokens must be less than or equal to max_tokens=4, got 5."},
      {R"("min_tokens": 1e300)", "'min_tokens' must be an integer"},
      {R"("logit_bias": [1])", "'logit_bias' must be an object"},
      {R"("logit_bias": {"x": 1})", "'logit_bias' keys must be token ids (integers), got 'x'"},
      {R"("logit_bias": {"1.5": 1})", "'logit_bias' keys must be token ids"},
      {R"("logit_bias": {"": 1})", "'logit_bias' keys must be token ids"},
      {R"("logit_bias": {"99999999999": 1})", "'logit_bias' keys must be token ids"},
      {R"("logit_bias": {"5": "1"})", "'logit_bias' value of token id 5 must be a number"},
      {R"("stream_options": 5)", "'stream_options' must be an object"},
  };
  for (const auto& [fields, needle] : cases) {
    EXPECT_THAT(CompletionError(fields), HasSubstr(needle)) << fields;
  }
  std::string many = R"("logit_bias": {"0": 1)";
  for (int i = 1; i <= 1024; ++i) many += ",\"" + std::to_string(i) + "\": 1";
  EXPECT_THAT(CompletionError(many + "}"), HasSubstr("'logit_bias' takes at most 1024 token ids"));
}

TEST(OpenAiProtocolTest, MinTokensAndLogitBiasAreParsed) {
  auto r = ParseCompletionRequest(
      R"({"model": "m", "prompt": "x", "max_tokens": 8, "min_tokens": 8,
          "logit_bias": {"7": 500, "3": -1e300, "-2": 0.5, "7": -5}})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->sampling.min_tokens, 8);
  // Sorted by id, clamped to [-100, 100] as vLLM does; a repeated id keeps its last value.
  const std::vector<std::pair<int32_t, float>> expected = {{-2, 0.5f}, {3, -100.0f}, {7, -5.0f}};
  EXPECT_EQ(r->sampling.logit_bias, expected);
  // Chat without max_tokens: its default comes from the prompt later (checked then).
  auto chat = ParseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "min_tokens": 100})");
  ASSERT_TRUE(chat.ok()) << chat.status();
  EXPECT_EQ(chat->sampling.min_tokens, 100);
  EXPECT_FALSE(ParseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
                                    "min_tokens": 100, "max_tokens": 99})")
                   .ok());
  // null keeps the defaults (vLLM's Optional fields).
  EXPECT_TRUE(ParseCompletionRequest(R"({"model": "m", "prompt": "x", "logit_bias": null, "min_tokens": null,
                                        "temperature": null, "seed": null})")
                  .ok());
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
