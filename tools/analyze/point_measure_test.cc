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
  const PointResult r = ReduceSweep(*ParseObjective("max-throughput:p99<=10"), report);
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
  const PointResult r = ReduceSweep(*ParseObjective("max-throughput:p99<=5"), report);
  EXPECT_FALSE(r.met);
  EXPECT_DOUBLE_EQ(r.score, 20);
  EXPECT_EQ(r.concurrency, 1);
}

TEST(ReduceSweepTest, LevelsWithErrorsDoNotMeetTheObjective) {
  bench::RunReport report;
  report.levels = {Level(1, 100, 1, 2, /*errors=*/3)};
  EXPECT_FALSE(ReduceSweep(*ParseObjective("max-throughput:p99<=5"), report).met);
}

TEST(ReduceSweepTest, MinLatencyNeedsTheRate) {
  bench::RunReport report;
  report.levels = {Level(0, 196, 1, 3)};
  const PointResult met = ReduceSweep(*ParseObjective("min-latency:rate>=200"), report);
  EXPECT_TRUE(met.met);  // within 5 % of the rate
  EXPECT_DOUBLE_EQ(met.score, 3);
  report.levels = {Level(0, 120, 1, 3)};
  const PointResult short_of_rate = ReduceSweep(*ParseObjective("min-latency:rate>=200"), report);
  EXPECT_FALSE(short_of_rate.met);
  EXPECT_DOUBLE_EQ(short_of_rate.score, 120);
}

TEST(ReduceSweepTest, NothingMeasuredIsNotLoaded) {
  bench::RunReport report;
  report.stop_reason = "interrupted";
  const PointResult r = ReduceSweep(*ParseObjective("max-throughput:p99<=5"), report);
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, ::testing::HasSubstr("interrupted"));
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
