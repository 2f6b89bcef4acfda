#include "tools/bench/stability.h"

#include <gtest/gtest.h>

namespace infera::bench {
namespace {

TEST(StabilityTrackerTest, NeedsThreeWindows) {
  StabilityTracker s(3, 10);
  s.Add(100, 1.0);
  EXPECT_FALSE(s.Stable());
  s.Add(100, 1.0);
  EXPECT_FALSE(s.Stable());
  s.Add(100, 1.0);
  EXPECT_TRUE(s.Stable());
}

TEST(StabilityTrackerTest, ThroughputAndLatencyMustBothBeWithinPercentOfMean) {
  StabilityTracker s(3, 10);
  s.Add(100, 1.0);
  s.Add(100, 1.0);
  s.Add(125, 1.0);  // mean 108.3: 125 is 15 % above
  EXPECT_FALSE(s.Stable());
  s.Add(105, 1.0);  // last three 100, 125, 105
  EXPECT_FALSE(s.Stable());
  s.Add(110, 1.0);  // 125, 105, 110: mean 113.3; 125 is 10.3 % above
  EXPECT_FALSE(s.Stable());
  s.Add(112, 1.0);  // 105, 110, 112: mean 109, all within 10 %
  EXPECT_TRUE(s.Stable());
  s.Add(110, 2.0);  // latency jumps
  EXPECT_FALSE(s.Stable());
}

TEST(StabilityTrackerTest, AWindowWithoutSuccessIsNeverStable) {
  StabilityTracker s(3, 10);
  for (int i = 0; i < 3; ++i) s.Add(0, 0);
  EXPECT_FALSE(s.Stable());
}

TEST(StabilityTrackerTest, ResetStartsOver) {
  StabilityTracker s(3, 10);
  for (int i = 0; i < 3; ++i) s.Add(50, 2);
  ASSERT_TRUE(s.Stable());
  s.Reset();
  EXPECT_FALSE(s.Stable());
}

}  // namespace
}  // namespace infera::bench
