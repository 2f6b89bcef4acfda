#include "tools/bench/range_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infera::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<double> Levels(std::string_view text) {
  auto range = ParseRangeSpec(text);
  EXPECT_TRUE(range.ok()) << range.status();
  return range.ok() ? range->Levels() : std::vector<double>{};
}

TEST(RangeSpecTest, SingleValue) { EXPECT_THAT(Levels("8"), ElementsAre(8)); }

TEST(RangeSpecTest, StartEndDefaultsToStepOne) {
  EXPECT_THAT(Levels("1:4"), ElementsAre(1, 2, 3, 4));
}

TEST(RangeSpecTest, PlainStepIsAdditiveLikePerfAnalyzer) {
  EXPECT_THAT(Levels("1:64:8"), ElementsAre(1, 9, 17, 25, 33, 41, 49, 57));
  EXPECT_THAT(Levels("1:64:+8"), ElementsAre(1, 9, 17, 25, 33, 41, 49, 57));
}

TEST(RangeSpecTest, MultiplicativeStepIncludesEnd) {
  EXPECT_THAT(Levels("1:64:x2"), ElementsAre(1, 2, 4, 8, 16, 32, 64));
  EXPECT_THAT(Levels("1:64:*2"), ElementsAre(1, 2, 4, 8, 16, 32, 64));
  EXPECT_THAT(Levels("1:100:x2"), ElementsAre(1, 2, 4, 8, 16, 32, 64));
}

TEST(RangeSpecTest, FractionalRatesAndFactors) {
  EXPECT_THAT(Levels("100:400:x1.5"), ElementsAre(100, 150, 225, 337.5));
  EXPECT_THAT(Levels("0.5:1.5:0.5"), ElementsAre(0.5, 1.0, 1.5));
}

TEST(RangeSpecTest, AdditiveStepsDoNotDrift) {
  auto levels = Levels("0.1:1:0.1");
  ASSERT_EQ(levels.size(), 10u);
  EXPECT_DOUBLE_EQ(levels.back(), 1.0);
}

TEST(RangeSpecTest, RejectsBadInput) {
  for (const char* bad : {"", "0", "-1", "a", "4:2", "1:8:0", "1:8:x1", "1:8:x0.5", "1:8:y2",
                          "1:2:3:4", "1::2", "1:1000000:1", "nan", "inf"}) {
    EXPECT_FALSE(ParseRangeSpec(bad).ok()) << bad;
  }
  EXPECT_THAT(std::string(ParseRangeSpec("4:2").status().message()), HasSubstr("END"));
  EXPECT_THAT(std::string(ParseRangeSpec("1:8:x1").status().message()), HasSubstr("factor"));
}

TEST(RangeSpecTest, ToStringRoundTrips) {
  for (const char* text : {"8", "1:64:x2", "1:64:8", "100:400:x1.5"}) {
    auto range = ParseRangeSpec(text);
    ASSERT_TRUE(range.ok());
    auto again = ParseRangeSpec(range->ToString());
    ASSERT_TRUE(again.ok()) << range->ToString();
    EXPECT_EQ(again->Levels(), range->Levels()) << text;
  }
  EXPECT_EQ(ParseRangeSpec("1:64:x2")->ToString(), "1:64:x2");
}

}  // namespace
}  // namespace infera::bench
