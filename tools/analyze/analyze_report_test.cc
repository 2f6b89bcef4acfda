#include "tools/analyze/analyze_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  MeasuredPoint a{{{"instances", "1"}, {"max_batch", "off"}}, "instances=1 max_batch=off", "start", {}};
  a.result.loaded = true;
  a.result.met = true;
  a.result.score = a.result.throughput_rps = 1000;
  a.result.p50_ms = 0.5;
  a.result.p99_ms = a.result.objective_latency_ms = 1.5;
  a.result.concurrency = 4;
  a.result.server_cpu_us_per_request = 420;
  a.result.curve = {{500, 0.8}, {1000, 1.5}};
  MeasuredPoint b{{{"instances", "2"}, {"max_batch", "off"}}, "instances=2 max_batch=off", "instances", {}};
  b.result.error = "load refused (HTTP 400): bad | value\nmore";
  run.search.measured = {a, b};
  run.search.best = 0;
  return run;
}

TEST(AnalyzeReportTest, TableHasEveryPointAndTheSummary) {
  const std::string report = FormatReport(SampleRun());
  EXPECT_THAT(report, HasSubstr("measured 2 points of a full grid of 38 in 12.5 s"));
  EXPECT_THAT(report, HasSubstr("| 1 | instances=1 max_batch=off | start | 1000.0 | 0.50 | 1.50 | 4 | 420 | met **(best)** |"));
  EXPECT_THAT(report, HasSubstr("| 2 | instances=2 max_batch=off | instances | - |"));
  EXPECT_THAT(report, HasSubstr("failed: load refused (HTTP 400): bad   value more"));  // cell kept on one row
  EXPECT_THAT(report, HasSubstr("Best: `instances=1 max_batch=off`"));
}

TEST(AnalyzeReportTest, OtherPercentilesGetTheirOwnColumn) {
  AnalyzeRun run = SampleRun();
  run.objective = *ParseObjective("max-throughput:p95<=5");
  run.search.measured[0].result.objective_latency_ms = 1.25;
  const std::string report = FormatReport(run);
  EXPECT_THAT(report, HasSubstr("| P99 (ms) | P95 (ms) | concurrency |"));
  EXPECT_THAT(report, HasSubstr("| 0.50 | 1.50 | 1.25 | 4 |"));
  EXPECT_THAT(report, HasSubstr("| - | - | - | - | - | - | failed"));
}

TEST(AnalyzeReportTest, BaselineIsRowZeroAndCompared) {
  AnalyzeRun run = SampleRun();
  PointResult own;
  own.loaded = own.met = true;
  own.throughput_rps = own.score = 400;
  own.p50_ms = 0.4;
  own.p99_ms = own.objective_latency_ms = 1;
  own.concurrency = 2;
  run.baseline = own;
  const std::string report = FormatReport(run);
  EXPECT_THAT(report, HasSubstr("| 0 | the model's own config.pbtxt | baseline | 400.0 |"));
  EXPECT_THAT(report, HasSubstr("| 1 | instances=1 max_batch=off | start | 1000.0 |"));
  EXPECT_THAT(report, HasSubstr("met **(best)**"));
  EXPECT_THAT(report, HasSubstr("the best is 2.50x its throughput"));
}

TEST(AnalyzeReportTest, UnmetObjectiveSaysSo) {
  AnalyzeRun run = SampleRun();
  run.search.measured[0].result.met = false;
  EXPECT_THAT(FormatReport(run), HasSubstr("Objective not met by any configuration. Best effort"));
  run.error = "the server process died (killed by signal 9)";
  EXPECT_THAT(FormatReport(run), HasSubstr("**error**: the server process died"));
}

TEST(AnalyzeReportTest, PlotHasOneSeriesPerLoadedPoint) {
  const std::string svg = FormatPlot(SampleRun());
  EXPECT_EQ(svg.rfind("<svg", 0) == 0 || svg.rfind("<?xml", 0) == 0, true) << svg.substr(0, 80);
  EXPECT_THAT(svg, HasSubstr("instances=1 max_batch=off"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("instances=2 max_batch=off")));  // failed: no curve
  EXPECT_THAT(svg, HasSubstr("</svg>"));
}

}  // namespace
}  // namespace infera::analyze
