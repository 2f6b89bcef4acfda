#include "api/sampling_params.h"

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

}  // namespace
}  // namespace infera
