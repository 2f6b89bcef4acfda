#include "tools/bench/arrival_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace infera::bench {
namespace {

TEST(ArrivalScheduleTest, ConstantIsExactAndDoesNotDrift) {
  ArrivalSchedule schedule(3.0, ArrivalDistribution::kConstant, 1);  // 333.33.. ms apart
  EXPECT_EQ(schedule.Next(), 0);
  EXPECT_EQ(schedule.Next(), 333'333'333);
  EXPECT_EQ(schedule.Next(), 666'666'667);
  EXPECT_EQ(schedule.Next(), 1'000'000'000);
  int64_t last = 0;
  for (int i = 4; i <= 300'000; ++i) last = schedule.Next();
  EXPECT_EQ(last, 100'000 * int64_t{1'000'000'000});  // arrival 300000 at exactly 100000 s
}

TEST(ArrivalScheduleTest, PoissonHasTheRightMeanAndVariance) {
  const double rate = 2000;
  ArrivalSchedule schedule(rate, ArrivalDistribution::kPoisson, 42);
  std::vector<double> gaps;
  int64_t previous = 0;
  for (int i = 0; i < 200'000; ++i) {
    const int64_t t = schedule.Next();
    ASSERT_GE(t, previous);
    gaps.push_back(static_cast<double>(t - previous) / 1e9);
    previous = t;
  }
  double mean = 0;
  for (double g : gaps) mean += g;
  mean /= gaps.size();
  double variance = 0;
  for (double g : gaps) variance += (g - mean) * (g - mean);
  variance /= gaps.size();
  // Exponential gaps: mean 1/rate, coefficient of variation 1.
  EXPECT_NEAR(mean, 1 / rate, 0.01 / rate);
  EXPECT_NEAR(std::sqrt(variance) / mean, 1.0, 0.02);
  // Achieved rate over the whole run within 1 %.
  EXPECT_NEAR(gaps.size() / (previous / 1e9), rate, rate * 0.01);
}

TEST(ArrivalScheduleTest, SeedMakesPoissonReproducible) {
  ArrivalSchedule a(100, ArrivalDistribution::kPoisson, 9), b(100, ArrivalDistribution::kPoisson, 9),
      c(100, ArrivalDistribution::kPoisson, 10);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const int64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(ArrivalScheduleTest, NamesParse) {
  EXPECT_EQ(ParseArrivalDistribution("poisson"), ArrivalDistribution::kPoisson);
  EXPECT_EQ(ParseArrivalDistribution("constant"), ArrivalDistribution::kConstant);
  EXPECT_FALSE(ParseArrivalDistribution("uniform").has_value());
  EXPECT_EQ(ArrivalDistributionName(ArrivalDistribution::kPoisson), "poisson");
}

}  // namespace
}  // namespace infera::bench

namespace infera::bench {
namespace {

TEST(ArrivalScheduleTest, IntervalsAreFollowedInOrderAndStartOver) {
  ArrivalSchedule schedule(std::vector<int64_t>{100, 300, 200});
  EXPECT_DOUBLE_EQ(schedule.rate_per_s(), 3 * 1e9 / 600);
  std::vector<int64_t> offsets;
  for (int i = 0; i < 7; ++i) offsets.push_back(schedule.Next());
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 100, 400, 600, 700, 1000, 1200}));
  EXPECT_EQ(ArrivalDistributionName(ArrivalDistribution::kIntervals), "intervals");
}

}  // namespace
}  // namespace infera::bench
