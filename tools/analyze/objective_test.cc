#include "tools/analyze/objective.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace infera::analyze {
namespace {

using ::testing::HasSubstr;

TEST(ObjectiveTest, ParsesMaxThroughputForms) {
  for (const char* text : {"max-throughput:p99<=20ms", "max-throughput:p99<=20 ms", " max-throughput : p99 <= 20 "}) {
    auto o = ParseObjective(text);
    ASSERT_TRUE(o.ok()) << text << ": " << o.status();
    EXPECT_EQ(o->kind, Objective::Kind::kMaxThroughput);
    EXPECT_EQ(o->percentile, 99);
    EXPECT_DOUBLE_EQ(o->latency_limit_ms, 20);
  }
  auto p95 = ParseObjective("max-throughput:p95<=2.5ms");
  ASSERT_TRUE(p95.ok());
  EXPECT_EQ(p95->percentile, 95);
  EXPECT_DOUBLE_EQ(p95->latency_limit_ms, 2.5);
  EXPECT_EQ(p95->ToString(), "max-throughput:p95<=2.5ms");
}

TEST(ObjectiveTest, ParsesMinLatency) {
  auto o = ParseObjective("min-latency:rate>=200");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->kind, Objective::Kind::kMinLatency);
  EXPECT_DOUBLE_EQ(o->min_rate, 200);
  EXPECT_EQ(o->ToString(), "min-latency:rate>=200");
  auto with_unit = ParseObjective("min-latency:rate>=150.5 req/s");
  ASSERT_TRUE(with_unit.ok()) << with_unit.status();
  EXPECT_DOUBLE_EQ(with_unit->min_rate, 150.5);
}

TEST(ObjectiveTest, HostileObjectivesNameTheProblem) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "expected"},
           {"max-throughput", "expected"},
           {"fastest:p99<=5", "unknown goal 'fastest'"},
           {"max-throughput:p97<=5", "unknown latency metric 'p97'"},
           {"max-throughput:latency<=5", "needs a latency bound"},
           {"max-throughput:p99<5", "needs '<='"},
           {"max-throughput:p99<=-5ms", "must be a finite number > 0"},
           {"max-throughput:p99<=0", "must be a finite number > 0"},
           {"max-throughput:p99<=nan", "must be a finite number > 0"},
           {"max-throughput:p99<=inf", "must be a finite number > 0"},
           {"max-throughput:p99<=", "a number is missing"},
           {"max-throughput:p99<=5 seconds", "is not a number"},
           {"max-throughput:p99<=5ms;rm", "is not a number"},
           {"min-latency:p99<=5", "needs a rate bound"},
           {"min-latency:rate=5", "needs '>='"},
           {"min-latency:rate>=abc", "is not a number"},
           {"min-latency:rate>=-1", "must be a finite number > 0"},
           {"min-latency:rate>=1e12", "above 1e7"},
       }) {
    auto o = ParseObjective(c.text);
    ASSERT_FALSE(o.ok()) << c.text;
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(o.status().message(), HasSubstr(c.message)) << c.text;
  }
  EXPECT_FALSE(ParseObjective(std::string(1000, 'x')).ok());
}

PointResult Met(double score) {
  PointResult r;
  r.loaded = true;
  r.met = true;
  r.verdict = Verdict::kMet;
  r.score = score;
  return r;
}

PointResult Unmet(double score) {
  PointResult r = Met(score);
  r.met = false;
  r.verdict = Verdict::kNotMet;
  return r;
}

PointResult WithinNoise(double score) {
  PointResult r = Met(score);
  r.met = false;
  r.verdict = Verdict::kWithinNoise;
  return r;
}

TEST(ObjectiveTest, BetterRanksLoadedThenMetThenScore) {
  const Objective throughput = *ParseObjective("max-throughput:p99<=10");
  const Objective latency = *ParseObjective("min-latency:rate>=100");
  PointResult failed;
  EXPECT_TRUE(Better(throughput, Unmet(1), failed));
  EXPECT_FALSE(Better(throughput, failed, Unmet(1)));
  EXPECT_TRUE(Better(throughput, Met(1), Unmet(100)));
  EXPECT_TRUE(Better(throughput, Met(200), Met(100)));  // more req/s
  EXPECT_TRUE(Better(throughput, Unmet(12), Unmet(30)));  // closer to the bound
  EXPECT_TRUE(Better(latency, Met(2), Met(3)));  // lower ms
  EXPECT_TRUE(Better(latency, Unmet(90), Unmet(50)));  // more of the rate served
  EXPECT_FALSE(Better(throughput, Met(100), Met(100)));
}

TEST(ObjectiveTest, GainIsRelativeImprovement) {
  const Objective throughput = *ParseObjective("max-throughput:p99<=10");
  const Objective latency = *ParseObjective("min-latency:rate>=100");
  EXPECT_DOUBLE_EQ(GainPercent(throughput, Met(110), Met(100)), 10);
  EXPECT_DOUBLE_EQ(GainPercent(throughput, Met(90), Met(100)), -10);
  EXPECT_DOUBLE_EQ(GainPercent(latency, Met(8), Met(10)), 20);
  EXPECT_TRUE(std::isinf(GainPercent(throughput, Met(1), Unmet(1))));
  EXPECT_GT(GainPercent(throughput, Met(1), Unmet(1)), 0);
  EXPECT_LT(GainPercent(throughput, PointResult{}, Met(1)), 0);
}

TEST(ObjectiveTest, SpreadIsMedianAndRange) {
  const Spread odd = SpreadOf({3, 1, 2});
  EXPECT_EQ(odd.n, 3);
  EXPECT_DOUBLE_EQ(odd.min, 1);
  EXPECT_DOUBLE_EQ(odd.median, 2);
  EXPECT_DOUBLE_EQ(odd.max, 3);
  EXPECT_DOUBLE_EQ(odd.RelativePct(), 100);
  EXPECT_DOUBLE_EQ(SpreadOf({4, 1, 2, 3}).median, 2.5);
  EXPECT_DOUBLE_EQ(SpreadOf({5}).RelativePct(), 0);  // one measurement: no spread known
  EXPECT_EQ(SpreadOf({}).n, 0);
}

TEST(ObjectiveTest, ARateBoundIsMetOnlyBeyondTheNoise) {
  // 199.9 req/s does not meet rate>=200, however close (the old rule allowed 5 % short).
  EXPECT_EQ(JudgeAtLeast(SpreadOf({199.9, 199.9, 199.9}), 200), Verdict::kNotMet);
  EXPECT_EQ(JudgeAtLeast(SpreadOf({199.9}), 200), Verdict::kNotMet);
  // Every measurement at or above the bound: met.
  EXPECT_EQ(JudgeAtLeast(SpreadOf({200.0, 204.5, 210.2}), 200), Verdict::kMet);
  // The median above, one measurement below: the bound is inside the spread.
  EXPECT_EQ(JudgeAtLeast(SpreadOf({199.9, 203, 205}), 200), Verdict::kWithinNoise);
  // The median below: not met, even when one measurement is above.
  EXPECT_EQ(JudgeAtLeast(SpreadOf({150, 199.9, 230}), 200), Verdict::kNotMet);
  EXPECT_EQ(JudgeAtLeast(Spread{}, 200), Verdict::kNotMet);
  EXPECT_STREQ(VerdictName(Verdict::kWithinNoise), "within noise");
  EXPECT_STREQ(VerdictName(Verdict::kMet), "met");
  EXPECT_STREQ(VerdictName(Verdict::kNotMet), "not met");
}

TEST(ObjectiveTest, ALatencyBoundIsMetOnlyBeyondTheNoise) {
  EXPECT_EQ(JudgeAtMost(SpreadOf({9.0, 9.5, 10.0}), 10), Verdict::kMet);
  EXPECT_EQ(JudgeAtMost(SpreadOf({9.0, 9.5, 10.1}), 10), Verdict::kWithinNoise);
  EXPECT_EQ(JudgeAtMost(SpreadOf({10.1, 10.1, 10.1}), 10), Verdict::kNotMet);
  const double inf = std::numeric_limits<double>::infinity();  // a repeat with errors
  EXPECT_EQ(JudgeAtMost(SpreadOf({5, 5, inf}), 10), Verdict::kWithinNoise);
  EXPECT_EQ(JudgeAtMost(SpreadOf({5, inf, inf}), 10), Verdict::kNotMet);
}

TEST(ObjectiveTest, WithinNoiseRanksBetweenMetAndNotMet) {
  const Objective throughput = *ParseObjective("max-throughput:p99<=10");
  EXPECT_TRUE(Better(throughput, Met(100), WithinNoise(500)));
  EXPECT_TRUE(Better(throughput, WithinNoise(100), Unmet(1)));
  EXPECT_TRUE(Better(throughput, WithinNoise(200), WithinNoise(100)));  // more req/s
  EXPECT_TRUE(std::isinf(GainPercent(throughput, Met(1), WithinNoise(1))));
  PointResult r;
  r.throughput_spread = SpreadOf({90, 100, 110});
  r.latency_spread = SpreadOf({1, 1, 1.05});
  EXPECT_DOUBLE_EQ(r.SpreadPct(throughput), 20);  // throughput ranks max-throughput points
  EXPECT_NEAR(r.SpreadPct(*ParseObjective("min-latency:rate>=100")), 5, 1e-9);  // latency ranks min-latency ones
}

}  // namespace
}  // namespace infera::analyze
