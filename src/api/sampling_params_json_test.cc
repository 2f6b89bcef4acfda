// ParseSamplingFields: vLLM's sampling fields from JSON, shared by the OpenAI requests
// and an LLM's KServe `sampling_parameters`.
#include "api/sampling_params_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::Status Parse(const std::string& json, SamplingParams& params, bool* max_tokens_set = nullptr,
                   int* n = nullptr) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  return ParseSamplingFields(doc, params, max_tokens_set, n);
}

std::string ErrorOf(const std::string& json, int* n = nullptr) {
  SamplingParams params;
  absl::Status status = Parse(json, params, nullptr, n);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << json;
  return std::string(status.message());
}

TEST(SamplingParamsJsonTest, ReadsEveryField) {
  SamplingParams p;
  bool max_tokens_set = false;
  int n = 0;
  ASSERT_TRUE(Parse(R"({"temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.1, "presence_penalty": 0.5,
                        "frequency_penalty": -0.5, "repetition_penalty": 1.2, "max_tokens": 7, "ignore_eos": true,
                        "include_stop_str_in_output": true, "skip_special_tokens": false, "seed": 3,
                        "stop": ["a", "b"], "stop_token_ids": [1, 2], "n": 3, "best_of": 3})",
                    p, &max_tokens_set, &n)
                  .ok());
  EXPECT_EQ(p.temperature, 0.5);
  EXPECT_EQ(p.top_p, 0.9);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_EQ(p.min_p, 0.1);
  EXPECT_EQ(p.presence_penalty, 0.5);
  EXPECT_EQ(p.frequency_penalty, -0.5);
  EXPECT_EQ(p.repetition_penalty, 1.2);
  EXPECT_EQ(p.max_tokens, 7);
  EXPECT_TRUE(max_tokens_set);
  EXPECT_TRUE(p.ignore_eos && p.include_stop_str_in_output && !p.skip_special_tokens);
  EXPECT_EQ(p.seed, 3u);
  EXPECT_THAT(p.stop, ElementsAre("a", "b"));
  EXPECT_THAT(p.stop_token_ids, ElementsAre(1, 2));
  EXPECT_EQ(n, 3);
}

TEST(SamplingParamsJsonTest, AbsentAndNullKeepTheDefaults) {
  SamplingParams p;
  bool max_tokens_set = false;
  int n = 0;
  ASSERT_TRUE(Parse(R"({"temperature": null, "stop": null, "n": null, "max_completion_tokens": null})", p,
                    &max_tokens_set, &n)
                  .ok());
  EXPECT_EQ(p.temperature, SamplingParams().temperature);
  EXPECT_EQ(p.max_tokens, 16);
  EXPECT_FALSE(max_tokens_set);
  EXPECT_EQ(n, 1);
  SamplingParams single;
  ASSERT_TRUE(Parse(R"({"stop": "x", "max_completion_tokens": 9})", single).ok());
  EXPECT_THAT(single.stop, ElementsAre("x"));
  EXPECT_EQ(single.max_tokens, 9);
}

// Integer fields are bounded here, so nothing downstream adds to a huge value.
TEST(SamplingParamsJsonTest, FieldsPastTheirLimitsAreRefusedByName) {
  SamplingParams p;
  EXPECT_TRUE(Parse(R"({"max_tokens": 16777216})", p).ok());
  EXPECT_THAT(ErrorOf(R"({"max_tokens": 16777217})"), HasSubstr("'max_tokens' must be at most 16777216"));
  EXPECT_THAT(ErrorOf(R"({"max_tokens": 18446744073709551615})"), HasSubstr("'max_tokens' must be an integer"));
  EXPECT_THAT(ErrorOf(R"({"top_k": 9223372036854775807})"), HasSubstr("'top_k' must be at most"));
  std::string ids = R"({"stop_token_ids": [1)";
  for (int i = 0; i < 1024; ++i) ids += ",1";
  EXPECT_THAT(ErrorOf(ids + "]}"), HasSubstr("'stop_token_ids' takes at most 1024 ids"));
  EXPECT_THAT(ErrorOf(R"({"temperature": "hot"})"), HasSubstr("'temperature' must be a number"));
  EXPECT_THAT(ErrorOf(R"({"ignore_eos": 1})"), HasSubstr("'ignore_eos' must be a boolean"));
  EXPECT_THAT(ErrorOf(R"({"seed": 1.5})"), HasSubstr("'seed' must be an integer"));
  EXPECT_THAT(ErrorOf(R"({"stop": 3})"), HasSubstr("'stop' must be a string or a list of strings"));
  EXPECT_THAT(ErrorOf(R"({"stop": ["a", 3]})"), HasSubstr("'stop'"));
  EXPECT_THAT(ErrorOf(R"({"stop_token_ids": [1.5]})"), HasSubstr("'stop_token_ids' must be a list of integers"));
  // Validate() runs on the result.
  EXPECT_THAT(ErrorOf(R"({"top_p": 0})"), HasSubstr("top_p"));
}

TEST(SamplingParamsJsonTest, SeveralChoicesOnlyWhereTheCallerTakesThem) {
  int n = 0;
  EXPECT_THAT(ErrorOf(R"({"n": 17})", &n), HasSubstr("'n' must be in [1, 16]"));
  EXPECT_THAT(ErrorOf(R"({"n": 0})", &n), HasSubstr("'n' must be in [1, 16]"));
  EXPECT_THAT(ErrorOf(R"({"n": 2, "best_of": 3})", &n), HasSubstr("'best_of' must equal n"));
  // KServe's sampling_parameters (no n out parameter): one choice only.
  EXPECT_THAT(ErrorOf(R"({"n": 2})"), HasSubstr("'n' must be 1"));
  SamplingParams p;
  EXPECT_TRUE(Parse(R"({"n": 1, "best_of": 1})", p).ok());
}

}  // namespace
}  // namespace infera
