#include "tools/bench/svg_plot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/str_cat.h"
#include "tools/bench/plot_command.h"
#include "tools/bench/svg_plot_testing.h"

namespace infera::bench {
namespace {

using ::testing::HasSubstr;
using plot_testing::ExpectLegendFits;
using plot_testing::SvgAttribute;

TEST(SvgPlotTest, TextWidthEstimateGrowsWithTheText) {
  EXPECT_GT(EstimateTextWidth("instances=1 batch=off", 12), EstimateTextWidth("instances=1", 12));
  EXPECT_GT(EstimateTextWidth("mmmm", 12), EstimateTextWidth("iiii", 12));
  // At least DejaVu Sans's advance (~0.55 em average for lower-case text) per character.
  EXPECT_GE(EstimateTextWidth("queue_delay_us", 12), 14 * 0.55 * 12);
  EXPECT_DOUBLE_EQ(EstimateTextWidth("", 12), 0);
}

TEST(SvgPlotTest, LegendFitsTheLongestLabelWhole) {
  // The labels that used to be clipped to "instances=1 max_ba" in a fixed legend box.
  const std::vector<PlotSeries> series = {
      {"1: instances=1 batch=off", {{100, 1, ""}, {200, 2, ""}}},
      {"2: instances=2 batch=16 queue_delay_us=1600 precision=int8_dynamic (best)", {{300, 2, ""}, {500, 4, ""}}},
      {"3: instances=1 batch=2 queue_delay_us=0", {{150, 1.5, ""}}},
  };
  const std::string svg = FormatSvgPlot(series, "ranker: P99 latency vs throughput per configuration");
  const LegendBox box = LayoutLegend(series);
  EXPECT_NEAR(SvgAttribute(svg, svg.find("<rect class=\"legend\""), "width"), box.width, 0.051);
  EXPECT_GE(box.height, 3 * 12.0);
  ExpectLegendFits(svg, {series[0].name, series[1].name, series[2].name});
}

TEST(SvgPlotTest, BenchPlotLegendFitsLongReportNames) {
  // `infera bench plot` names each series after its NAME=REPORT.json argument.
  const std::string report = R"({"levels": [
      {"concurrency": 1, "throughput_per_s": 100, "latency": {"p50_us": 900, "p99_us": 1500}},
      {"concurrency": 4, "throughput_per_s": 350, "latency": {"p50_us": 1100, "p99_us": 2600}}]})";
  std::vector<PlotSeries> series;
  std::vector<std::string> labels;
  for (const std::string name : {"infera-instances=2-batch=16-queue_delay_us=400", "flask+gunicorn-4-workers"}) {
    auto more = SeriesFromReportJson(name, report);
    ASSERT_TRUE(more.ok()) << more.status();
    for (const PlotSeries& s : *more) labels.push_back(s.name);
    series.insert(series.end(), more->begin(), more->end());
  }
  ASSERT_EQ(labels.size(), 4u);
  EXPECT_EQ(labels[0], "infera-instances=2-batch=16-queue_delay_us=400 P50");
  ExpectLegendFits(FormatSvgPlot(series, "latency vs throughput"), labels);
}

TEST(SvgPlotTest, AxesAreNamedWithTheirUnits) {
  const std::vector<PlotSeries> series = {{"P99", {{1200, 2.5, "c=8"}}}};
  const std::string latency = FormatSvgPlot(series, "t");
  EXPECT_THAT(latency, HasSubstr(">throughput (requests/s)</text>"));
  EXPECT_THAT(latency, HasSubstr(">latency (ms)</text>"));
  EXPECT_THAT(latency, HasSubstr("<title>P99 c=8: 1200.0 requests/s, 2.5 ms</title>"));
  const std::string other = FormatSvgPlot(series, "t", {"time", "s", "queue depth", "requests"});
  EXPECT_THAT(other, HasSubstr(">time (s)</text>"));
  EXPECT_THAT(other, HasSubstr(">queue depth (requests)</text>"));
}

TEST(SvgPlotTest, ManySeriesGrowThePicture) {
  std::vector<PlotSeries> series;
  std::vector<std::string> labels;
  for (int i = 0; i < 40; ++i) {
    series.push_back({StrCat("instances=", i), {{1.0 * i, 1, ""}}});
    labels.push_back(series.back().name);
  }
  const std::string svg = FormatSvgPlot(series, "t");
  ExpectLegendFits(svg, labels);
}

TEST(SvgPlotTest, LabelsAreEscaped) {
  const std::string svg = FormatSvgPlot({{"a<b & \"c\"", {{1, 1, ""}}}}, "x < y");
  EXPECT_THAT(svg, HasSubstr(">a&lt;b &amp; &quot;c&quot;</text>"));
  EXPECT_THAT(svg, HasSubstr(">x &lt; y</text>"));
}

// `infera bench plot` arguments: a series name may contain '=' (analyze's configuration
// labels do), so the split is at the first '=' whose right side can be read.
TEST(PlotCommandTest, NamedReportSplitsWhereTheReportIsReadable) {
  auto readable = [](const std::string& path) { return path == "run.json" || path == "dir=x/run.json"; };
  auto plain = SplitNamedReport("infera=run.json", readable);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->first, "infera");
  EXPECT_EQ(plain->second, "run.json");
  auto name_with_eq = SplitNamedReport("instances=1=run.json", readable);
  ASSERT_TRUE(name_with_eq.ok()) << name_with_eq.status();
  EXPECT_EQ(name_with_eq->first, "instances=1");
  EXPECT_EQ(name_with_eq->second, "run.json");
  auto path_with_eq = SplitNamedReport("a=dir=x/run.json", readable);
  ASSERT_TRUE(path_with_eq.ok()) << path_with_eq.status();
  EXPECT_EQ(path_with_eq->first, "a");
  EXPECT_EQ(path_with_eq->second, "dir=x/run.json");
  EXPECT_THAT(std::string(SplitNamedReport("run.json", readable).status().message()),
              HasSubstr("expected NAME=REPORT.json"));
  EXPECT_THAT(std::string(SplitNamedReport("=run.json", readable).status().message()),
              HasSubstr("expected NAME=REPORT.json"));
  EXPECT_THAT(std::string(SplitNamedReport("a=missing.json", readable).status().message()),
              HasSubstr("can be read"));
  EXPECT_THAT(std::string(SplitNamedReport("a=", readable).status().message()), HasSubstr("can be read"));
}

}  // namespace
}  // namespace infera::bench
