#include "tools/analyze/analyze_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/bench/svg_plot_testing.h"

namespace infera::analyze {
namespace {

using ::testing::HasSubstr;

AnalyzeRun SampleRun() {
  AnalyzeRun run;
  run.model = "simple";
  run.platform = "add_sub";
  run.objective = *ParseObjective("max-throughput:p99<=5");
  run.cores = 2;
  run.time_per_point_s = 1;
  run.search_seconds = 12.5;
  run.search.full_grid = 38;
  MeasuredPoint a{{{"instances", "1"}, {"batch", "off"}}, "instances=1 batch=off", "start", {}};
  a.result.loaded = true;
  a.result.met = true;
  a.result.verdict = Verdict::kMet;
  a.result.repeats = 3;
  a.result.throughput_spread = SpreadOf({990, 1000, 1010});
  a.result.latency_spread = SpreadOf({1.4, 1.5, 1.52});
  a.result.score = a.result.throughput_rps = 1000;
  a.result.p50_ms = 0.5;
  a.result.p99_ms = a.result.objective_latency_ms = 1.5;
  a.result.concurrency = 4;
  a.result.server_cpu_us_per_request = 420;
  a.result.curve = {{500, 0.8}, {1000, 1.5}};
  MeasuredPoint b{{{"instances", "2"}, {"batch", "off"}}, "instances=2 batch=off", "instances", {}};
  b.result.error = "load refused (HTTP 400): bad | value\nmore";
  run.search.measured = {a, b};
  run.search.best = 0;
  return run;
}

TEST(AnalyzeReportTest, TableHasEveryPointAndTheSummary) {
  const std::string report = FormatReport(SampleRun());
  EXPECT_THAT(report, HasSubstr("measured 2 points of a full grid of 38 in 12.5 s"));
  EXPECT_THAT(report, HasSubstr("| 1 | instances=1 batch=off | start | 1000.0 (990.0–1010.0) | 0.50 | 1.50 (1.40–1.52) | 2.0 % | 4 | 420 | met **(best)** |"));
  EXPECT_THAT(report, HasSubstr("| 2 | instances=2 batch=off | instances | - |"));
  EXPECT_THAT(report, HasSubstr("failed: load refused (HTTP 400): bad   value more"));  // cell kept on one row
  EXPECT_THAT(report, HasSubstr("Best: `instances=1 batch=off`"));
}

TEST(AnalyzeReportTest, OtherPercentilesGetTheirOwnColumn) {
  AnalyzeRun run = SampleRun();
  run.objective = *ParseObjective("max-throughput:p95<=5");
  run.search.measured[0].result.objective_latency_ms = 1.25;
  const std::string report = FormatReport(run);
  EXPECT_THAT(report, HasSubstr("| P99 (ms) | P95 (ms) | spread | concurrency |"));
  EXPECT_THAT(report, HasSubstr("| 0.50 | 1.50 | 1.25 (1.40–1.52) | 2.0 % | 4 |"));
  EXPECT_THAT(report, HasSubstr("| - | - | - | - | - | - | - | failed"));
}

TEST(AnalyzeReportTest, BaselineIsRowZeroAndCompared) {
  AnalyzeRun run = SampleRun();
  PointResult own;
  own.loaded = own.met = true;
  own.verdict = Verdict::kMet;
  own.throughput_rps = own.score = 400;
  own.p50_ms = 0.4;
  own.p99_ms = own.objective_latency_ms = 1;
  own.concurrency = 2;
  run.baseline = own;
  const std::string report = FormatReport(run);
  EXPECT_THAT(report, HasSubstr("| 0 | the model's own config.pbtxt | baseline | 400.0 |"));
  EXPECT_THAT(report, HasSubstr("| 1 | instances=1 batch=off | start | 1000.0 ("));
  EXPECT_THAT(report, HasSubstr("met **(best)**"));
  EXPECT_THAT(report, HasSubstr("the best is 2.50x its throughput"));
}

TEST(AnalyzeReportTest, UnmetObjectiveSaysSo) {
  AnalyzeRun run = SampleRun();
  run.search.measured[0].result.met = false;
  run.search.measured[0].result.verdict = Verdict::kNotMet;
  EXPECT_THAT(FormatReport(run), HasSubstr("Objective not met by any configuration. Best effort"));
  run.error = "the server process died (killed by signal 9)";
  EXPECT_THAT(FormatReport(run), HasSubstr("**error**: the server process died"));
}

TEST(AnalyzeReportTest, PlotHasOneSeriesPerLoadedPoint) {
  const std::string svg = FormatPlot(SampleRun());
  EXPECT_EQ(svg.rfind("<svg", 0) == 0 || svg.rfind("<?xml", 0) == 0, true) << svg.substr(0, 80);
  EXPECT_THAT(svg, HasSubstr(">1: instances=1 batch=off (best)</text>"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("instances=2 batch=off")));  // failed: no curve
  EXPECT_THAT(svg, HasSubstr("</svg>"));
}

TEST(AnalyzeReportTest, PlotLegendShowsLongConfigurationsWhole) {
  // Labels like these were all clipped to "instances=1 max_ba" in a fixed legend box.
  AnalyzeRun run = SampleRun();
  MeasuredPoint c = run.search.measured[0];
  c.label = "instances=2 batch=16 queue_delay_us=1600 precision=int8_dynamic";
  c.result.curve = {{800, 1.1}, {1600, 2.9}};
  run.search.measured.push_back(c);
  const std::string svg = FormatPlot(run);
  bench::plot_testing::ExpectLegendFits(
      svg, {"1: instances=1 batch=off (best)", "3: instances=2 batch=16 queue_delay_us=1600 precision=int8_dynamic"});
  EXPECT_THAT(svg, HasSubstr(">throughput (requests/s)</text>"));
  EXPECT_THAT(svg, HasSubstr(">P99 latency (ms)</text>"));
}

TEST(AnalyzeReportTest, SpreadsVerdictsAndWarnings) {
  AnalyzeRun run = SampleRun();
  run.repeats = 3;
  PointResult& r = run.search.measured[0].result;
  r.met = false;
  r.verdict = Verdict::kWithinNoise;
  r.throughput_spread = SpreadOf({800, 1000, 1100});  // 30 %: warned
  r.latency_spread = SpreadOf({1, 1.5, 9});  // far below the bound: ranks nothing, not warned
  const std::string report = FormatReport(run);
  EXPECT_THAT(report, HasSubstr("measurements per point: 3"));
  EXPECT_THAT(report, HasSubstr("| 30 % ⚠ |"));
  EXPECT_THAT(report, HasSubstr("within noise **(best)**"));
  EXPECT_THAT(report, HasSubstr("⚠ Measurements spread more than 10 % (max − min over the median of the throughput) "
                                "at #1 (30 %): their rank"));
  EXPECT_THAT(report, HasSubstr("(objective within noise: the median meets it, not every measurement)"));
  r.throughput_spread = SpreadOf({1000, 1100});  // one repeat's sweep stopped below this level
  EXPECT_THAT(FormatReport(run), HasSubstr("| 9.5 % (2 of 3 reached it) |"));
  r.repeats = 1;
  EXPECT_THAT(FormatReport(run), HasSubstr("| n=1, unknown |"));
}

TEST(AnalyzeReportTest, ChangesListEveryFieldAndANarrowedApi) {
  AnalyzeRun run = SampleRun();
  run.original_max_batch_size = 256;
  run.have_best_config = true;
  run.changes = {{"dynamic_batching.preferred_batch_size", "[]", "[16]"}, {"instance_group", "1 x KIND_CPU", "2 x KIND_CPU"}};
  std::string report = FormatReport(run);
  EXPECT_THAT(report, HasSubstr("## What the written config.pbtxt changes"));
  EXPECT_THAT(report, HasSubstr("- `dynamic_batching.preferred_batch_size`: [] → [16]\n"));
  EXPECT_THAT(report, HasSubstr("- `instance_group`: 1 x KIND_CPU → 2 x KIND_CPU\n"));
  EXPECT_THAT(report, HasSubstr("What clients may send is unchanged (max_batch_size 256 kept)"));
  run.allow_api_change = true;
  run.changes.push_back({"max_batch_size", "256", "16"});
  report = FormatReport(run);
  EXPECT_THAT(report, HasSubstr("- `max_batch_size`: 256 → 16\n"));
  EXPECT_THAT(report, HasSubstr("clients sending more than 16 rows in one request will be refused"));
  run.changes.clear();
  EXPECT_THAT(FormatReport(run), HasSubstr("Nothing: the best configuration is the model's own config.pbtxt."));
}

}  // namespace
}  // namespace infera::analyze
