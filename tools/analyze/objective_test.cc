#include "tools/analyze/objective.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  r.score = score;
  return r;
}

PointResult Unmet(double score) {
  PointResult r = Met(score);
  r.met = false;
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

}  // namespace
}  // namespace infera::analyze
