#include "llm/openai_protocol.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/llm_model_options.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OpenAiProtocolTest, ParsesCompletionsWithTextOrTokenIds) {
  auto r = ParseCompletionRequest(
      R"({"model": "m", "prompt": "hi", "max_tokens": 5, "temperature": 0, "stop": "\n",
          "ignore_eos": true, "seed": 3, "stream": true, "stream_options": {"include_usage": true}})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->prompt_text, "hi");
  EXPECT_EQ(r->sampling.max_tokens, 5);
  EXPECT_TRUE(r->sampling.greedy());
  EXPECT_THAT(r->sampling.stop, ElementsAre("\n"));
  EXPECT_TRUE(r->sampling.ignore_eos);
  EXPECT_TRUE(r->stream && r->include_usage);
  auto ids = ParseCompletionRequest(R"({"model": "m", "prompt": [1, 2, 3], "logprobs": 1})");
  ASSERT_TRUE(ids.ok());
  EXPECT_THAT(ids->prompt_ids, ElementsAre(1, 2, 3));
  EXPECT_TRUE(ids->sampling.logprobs);
  EXPECT_EQ(ids->sampling.max_tokens, 16);
}

TEST(OpenAiProtocolTest, RejectsBadFieldsByName) {
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"prompt": "x"})").status().message()), HasSubstr("'model'"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": "x", "top_p": 0})").status().message()),
              HasSubstr("top_p"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": "x", "n": 2})").status().message()),
              HasSubstr("'n'"));
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
TEST(OpenAiProtocolTest, IntegerFieldsAtAndPastTheirLimits) {
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
TEST(OpenAiProtocolTest, DeepNestingIsAnErrorNamingTheLimit) {
  const std::string deep = R"({"model": "m", "prompt": )" + std::string(250000, '[') + "1" +
                           std::string(250000, ']') + "}";
  EXPECT_THAT(std::string(ParseCompletionRequest(deep).status().message()), HasSubstr("100 levels"));
  EXPECT_THAT(std::string(ParseChatRequest(deep).status().message()), HasSubstr("100 levels"));
}

TEST(OpenAiProtocolTest, ParsesChatMessagesWithTextParts) {
  auto r = ParseChatRequest(
      R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
          {"type": "text", "text": "b"}]}], "max_completion_tokens": 7, "logprobs": true})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->messages[0].content, "ab");
  EXPECT_EQ(r->sampling.max_tokens, 7);
  EXPECT_TRUE(r->max_tokens_set);
  EXPECT_TRUE(r->sampling.logprobs);
}

TEST(OpenAiProtocolTest, BuildsResponsesAndErrors) {
  ChoiceDelta c;
  c.text = "hi";
  c.finish_reason = FinishReason::kLength;
  EXPECT_EQ(CompletionJson("cmpl-1", 10, "m", c, {3, 1, 0}),
            R"({"id":"cmpl-1","object":"text_completion","created":10,"model":"m","choices":[{"index":0,)"
            R"("text":"hi","logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":3,)"
            R"("completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}})");
  EXPECT_THAT(ChatChunkJson("c", 1, "m", c, true), HasSubstr(R"("delta":{"role":"assistant","content":"hi"})"));
  EXPECT_EQ(OpenAiErrorJson(404, "nope"),
            R"({"error":{"message":"nope","type":"NotFoundError","param":null,"code":404}})");
}

// Issue 13 finding 11: error messages echo client bytes; the body must stay JSON.
TEST(OpenAiProtocolTest, ErrorJsonReplacesInvalidUtf8) {
  EXPECT_EQ(OpenAiErrorJson(404, "model 'a\xff' does not exist"),
            "{\"error\":{\"message\":\"model 'a\xef\xbf\xbd' does not exist\",\"type\":\"NotFoundError\","
            "\"param\":null,\"code\":404}}");
  EXPECT_THAT(std::string(ParseCompletionRequest("{\"model\": \"\xff\", \"prompt\": \"x\"}").status().message()),
              HasSubstr("encoding"));
}

TEST(LlmModelOptionsTest, ParsesParametersAndByteSizes) {
  inference::ModelConfig config;
  (*config.mutable_parameters())["max_num_seqs"].set_string_value("4");
  (*config.mutable_parameters())["kv_cache_memory_bytes"].set_string_value("64MiB");
  (*config.mutable_parameters())["scheduling_policy"].set_string_value("priority");
  auto o = LlmModelOptions::FromConfig(config);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->max_num_seqs, 4);
  EXPECT_EQ(o->KvCacheBytes(1 << 30), 64 << 20);
  EXPECT_EQ(o->policy, SchedulingPolicy::kPriority);
  (*config.mutable_parameters())["block_size"].set_string_value("zero");
  EXPECT_THAT(std::string(LlmModelOptions::FromConfig(config).status().message()), HasSubstr("block_size"));
  EXPECT_EQ(ParseByteSize("2G"), int64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("12x"), std::nullopt);
}

// Found by fuzz/fuzz_openai_protocol: with RapidJSON's full-precision number parsing this
// body read outside RapidJSON's power-of-ten table (SIGSEGV, the whole server).
TEST(OpenAiProtocolTest, LongZeroRunNumberDoesNotCrashTheParser) {
  const std::string number = "0." + std::string(370, '0') + "8899831653300944850";
  auto request = ParseCompletionRequest(R"({"model": "m", "prompt": "a", "temperature": )" + number + "}");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_GE(request->sampling.temperature, 0.0);
  EXPECT_LT(request->sampling.temperature, 1e-300);
}

}  // namespace
}  // namespace infera::llm
