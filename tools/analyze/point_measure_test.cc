#include "tools/analyze/point_measure.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infera::analyze {
namespace {

bench::LevelResult Level(int concurrency, double rps, double p50_ms, double p99_ms, int64_t errors = 0) {
  bench::LevelResult l;
  l.concurrency = concurrency;
  l.throughput_rps = rps;
  l.ok = 100;
  l.errors = errors;
  l.latency.count = 100;
  l.latency.p50_us = p50_ms * 1e3;
  l.latency.p90_us = l.latency.p95_us = l.latency.p99_us = p99_ms * 1e3;
  return l;
}

TEST(ReduceSweepTest, MaxThroughputTakesTheBestLevelWithinTheBound) {
  bench::RunReport report;
  report.levels = {Level(1, 100, 1, 2), Level(2, 180, 1.5, 4), Level(4, 240, 3, 9), Level(8, 260, 6, 15)};
  const PointResult r = ReduceSweeps(*ParseObjective("max-throughput:p99<=10"), {report});
  EXPECT_TRUE(r.loaded);
  EXPECT_TRUE(r.met);
  EXPECT_DOUBLE_EQ(r.score, 240);
  EXPECT_EQ(r.concurrency, 4);
  EXPECT_DOUBLE_EQ(r.p99_ms, 9);
  EXPECT_EQ(r.curve.size(), 4u);
}

TEST(ReduceSweepTest, MaxThroughputUnmetScoresTheLowestLatency) {
  bench::RunReport report;
  report.levels = {Level(1, 100, 10, 20), Level(2, 150, 12, 25)};
  const PointResult r = ReduceSweeps(*ParseObjective("max-throughput:p99<=5"), {report});
  EXPECT_FALSE(r.met);
  EXPECT_DOUBLE_EQ(r.score, 20);
  EXPECT_EQ(r.concurrency, 1);
}

TEST(ReduceSweepTest, LevelsWithErrorsDoNotMeetTheObjective) {
  bench::RunReport report;
  report.levels = {Level(1, 100, 1, 2, /*errors=*/3)};
  EXPECT_FALSE(ReduceSweeps(*ParseObjective("max-throughput:p99<=5"), {report}).met);
}

TEST(ReduceSweepTest, MinLatencyNeedsTheRate) {
  bench::RunReport report;
  report.levels = {Level(0, 196, 1, 3)};
  EXPECT_EQ(ReduceSweeps(*ParseObjective("min-latency:rate>=200"), {report}).verdict, Verdict::kNotMet);  // short
  report.levels = {Level(0, 209, 1, 3)};
  const PointResult met = ReduceSweeps(*ParseObjective("min-latency:rate>=200"), {report});
  EXPECT_TRUE(met.met);
  EXPECT_DOUBLE_EQ(met.score, 3);
  report.levels = {Level(0, 120, 1, 3)};
  const PointResult short_of_rate = ReduceSweeps(*ParseObjective("min-latency:rate>=200"), {report});
  EXPECT_FALSE(short_of_rate.met);
  EXPECT_DOUBLE_EQ(short_of_rate.score, 120);
}

TEST(ReduceSweepTest, NothingMeasuredIsNotLoaded) {
  bench::RunReport report;
  report.stop_reason = "interrupted";
  const PointResult r = ReduceSweeps(*ParseObjective("max-throughput:p99<=5"), {report});
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, ::testing::HasSubstr("interrupted"));
}

bench::RunReport Sweep(std::vector<bench::LevelResult> levels) {
  bench::RunReport report;
  report.levels = std::move(levels);
  return report;
}

TEST(ReduceSweepsTest, RepeatsGiveMediansAndSpreads) {
  const Objective o = *ParseObjective("max-throughput:p99<=10");
  const PointResult r = ReduceSweeps(o, {Sweep({Level(1, 100, 1, 2), Level(2, 180, 2, 4)}),
                                         Sweep({Level(1, 110, 1, 3), Level(2, 200, 2, 6)}),
                                         Sweep({Level(1, 90, 1, 2.5), Level(2, 190, 2, 5)})});
  ASSERT_TRUE(r.loaded);
  EXPECT_EQ(r.repeats, 3);
  EXPECT_EQ(r.verdict, Verdict::kMet);
  EXPECT_EQ(r.concurrency, 2);
  EXPECT_DOUBLE_EQ(r.throughput_rps, 190);  // the median
  EXPECT_DOUBLE_EQ(r.throughput_spread.min, 180);
  EXPECT_DOUBLE_EQ(r.throughput_spread.max, 200);
  EXPECT_DOUBLE_EQ(r.p99_ms, 5);
  EXPECT_DOUBLE_EQ(r.latency_spread.min, 4);
  EXPECT_DOUBLE_EQ(r.latency_spread.max, 6);
  EXPECT_DOUBLE_EQ(r.score, 190);
  EXPECT_NEAR(r.SpreadPct(o), 20.0 / 190 * 100, 1e-9);  // throughput 180..200 around 190
  ASSERT_EQ(r.curve.size(), 2u);
  EXPECT_DOUBLE_EQ(r.curve[1].first, 190);
}

TEST(ReduceSweepsTest, ALevelOverTheBoundInOneRepeatIsWithinNoise) {
  const Objective o = *ParseObjective("max-throughput:p99<=10");
  // Level 2 exceeds 10 ms once; level 1 is clean: level 1 is met, level 2 within noise,
  // and met beats within noise whatever the throughput.
  const PointResult r = ReduceSweeps(o, {Sweep({Level(1, 100, 1, 5), Level(2, 300, 2, 9)}),
                                         Sweep({Level(1, 100, 1, 5), Level(2, 300, 2, 11)}),
                                         Sweep({Level(1, 100, 1, 5), Level(2, 300, 2, 9.5)})});
  EXPECT_EQ(r.verdict, Verdict::kMet);
  EXPECT_EQ(r.concurrency, 1);
  // Without the clean level the point is within noise at level 2.
  const PointResult noisy = ReduceSweeps(o, {Sweep({Level(2, 300, 2, 9)}), Sweep({Level(2, 300, 2, 11)}),
                                             Sweep({Level(2, 300, 2, 9.5)})});
  EXPECT_EQ(noisy.verdict, Verdict::kWithinNoise);
  EXPECT_FALSE(noisy.met);
  EXPECT_DOUBLE_EQ(noisy.score, 300);
  // A level one repeat never reached (its sweep stopped earlier) counts against it.
  const PointResult missing = ReduceSweeps(o, {Sweep({Level(1, 100, 1, 5), Level(2, 300, 2, 9)}),
                                               Sweep({Level(1, 100, 1, 11)}),
                                               Sweep({Level(1, 100, 1, 5), Level(2, 300, 2, 9)})});
  EXPECT_EQ(missing.concurrency, 2);
  EXPECT_EQ(missing.verdict, Verdict::kWithinNoise);
}

TEST(ReduceSweepsTest, MinLatencyJudgesTheRateOnEveryRepeat) {
  const Objective o = *ParseObjective("min-latency:rate>=200");
  const PointResult just_short = ReduceSweeps(o, {Sweep({Level(0, 199.9, 1, 3)}), Sweep({Level(0, 199.9, 1, 3)}),
                                                  Sweep({Level(0, 199.9, 1, 3)})});
  EXPECT_EQ(just_short.verdict, Verdict::kNotMet);  // 199.9 is not >= 200
  EXPECT_DOUBLE_EQ(just_short.score, 199.9);
  const PointResult noisy = ReduceSweeps(o, {Sweep({Level(0, 199.5, 1, 3)}), Sweep({Level(0, 208, 1, 4)}),
                                             Sweep({Level(0, 209, 1, 5)})});
  EXPECT_EQ(noisy.verdict, Verdict::kWithinNoise);
  EXPECT_DOUBLE_EQ(noisy.score, 4);  // the median P99
  const PointResult errors = ReduceSweeps(o, {Sweep({Level(0, 210, 1, 3)}), Sweep({Level(0, 210, 1, 3, 2)}),
                                              Sweep({Level(0, 210, 1, 3)})});
  EXPECT_EQ(errors.verdict, Verdict::kWithinNoise);  // a repeat with errors does not serve the rate
  const PointResult met = ReduceSweeps(o, {Sweep({Level(0, 209, 1, 3)}), Sweep({Level(0, 210, 1, 3)}),
                                           Sweep({Level(0, 211, 1, 3)})});
  EXPECT_EQ(met.verdict, Verdict::kMet);
  EXPECT_TRUE(met.met);
}

TEST(LoadWithOverrideTest, UnreachableServerIsUnavailable) {
  MeasureSettings settings;
  settings.port = 1;  // nothing listens on port 1 of loopback
  settings.model = "simple";
  settings.load_timeout_ms = 2000;
  const absl::Status s = LoadWithOverride(settings, "{}");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
}

}  // namespace
}  // namespace infera::analyze
