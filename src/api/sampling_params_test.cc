#include "api/sampling_params.h"

#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(SamplingParamsTest, MaxTokensIsBounded) {
  SamplingParams p;
  p.max_tokens = kMaxMaxTokens;
  EXPECT_TRUE(p.Validate().ok());
  for (int64_t bad : {kMaxMaxTokens + 1, INT64_MAX}) {
    p.max_tokens = bad;
    absl::Status status = p.Validate();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("max_tokens must be at most 16777216"));
  }
  p.max_tokens = 0;
  EXPECT_THAT(std::string(p.Validate().message()), ::testing::HasSubstr("max_tokens"));
}

TEST(SamplingParamsTest, MinTokensAndLogitBiasAreBoundedInVllmWords) {
  SamplingParams p;
  p.max_tokens = 10;
  p.min_tokens = 10;
  EXPECT_TRUE(p.Validate().ok());
  p.min_tokens = 11;
  EXPECT_THAT(std::string(p.Validate().message()),
              ::testing::HasSubstr("min_tokens must be less than or equal to max_tokens=10, got 11."));
  p.min_tokens = -1;
  EXPECT_THAT(std::string(p.Validate().message()),
              ::testing::HasSubstr("min_tokens must be greater than or equal to 0, got -1."));
  p.min_tokens = 0;
  p.logit_bias = {{5, 100.0f}, {6, -100.0f}};
  EXPECT_TRUE(p.Validate().ok());
  for (float bad : {100.5f, -101.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    p.logit_bias = {{5, bad}};
    EXPECT_THAT(std::string(p.Validate().message()), ::testing::HasSubstr("logit_bias")) << bad;
  }
}

TEST(SamplingParamsTest, NanAndInfinityFailEveryRealField) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const char* field : {"temperature", "top_p", "min_p", "repetition_penalty", "frequency_penalty",
                            "presence_penalty"}) {
    for (double bad : {nan, inf, -inf}) {
      SamplingParams p;
      const std::string name = field;
      double& value = name == "temperature"          ? p.temperature
                      : name == "top_p"              ? p.top_p
                      : name == "min_p"              ? p.min_p
                      : name == "repetition_penalty" ? p.repetition_penalty
                      : name == "frequency_penalty"  ? p.frequency_penalty
                                                     : p.presence_penalty;
      value = bad;
      const absl::Status status = p.Validate();
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << field << " " << bad;
      EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(field)) << bad;
    }
  }
}

}  // namespace
}  // namespace infera
