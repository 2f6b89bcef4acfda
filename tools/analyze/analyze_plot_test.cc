#include "tools/analyze/analyze_plot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

namespace infera::analyze {
namespace {

using ::testing::HasSubstr;

double Attribute(const std::string& element, const std::string& name) {
  std::smatch m;
  const std::regex re(" " + name + "=\"([0-9.]+)\"");
  EXPECT_TRUE(std::regex_search(element, m, re)) << name << " in " << element;
  return std::stod(m[1]);
}

TEST(AnalyzePlotTest, TextWidthEstimateGrowsWithTheText) {
  EXPECT_GT(EstimateTextWidth("instances=1 batch=off", 12), EstimateTextWidth("instances=1", 12));
  EXPECT_GT(EstimateTextWidth("mmmm", 12), EstimateTextWidth("iiii", 12));
  // At least DejaVu Sans's advance (~0.55 em average for lower-case text) per character.
  EXPECT_GE(EstimateTextWidth("queue_delay_us", 12), 14 * 0.55 * 12);
  EXPECT_DOUBLE_EQ(EstimateTextWidth("", 12), 0);
}

TEST(AnalyzePlotTest, LegendFitsTheLongestLabelWhole) {
  // The labels that used to be clipped to "instances=1 max_ba" in a fixed legend box.
  std::vector<PlotLine> lines = {
      {"1: instances=1 batch=off", {{100, 1}, {200, 2}}},
      {"2: instances=2 batch=16 queue_delay_us=1600 precision=int8_dynamic (best)", {{300, 2}, {500, 4}}},
      {"3: instances=1 batch=2 queue_delay_us=0", {{150, 1.5}}},
  };
  const std::string svg = FormatLatencyPlot(lines, "ranker: P99 latency vs throughput per configuration");
  const LegendBox box = LayoutLegend(lines);
  // The legend box drawn is the laid-out one, and wide enough for every label's text
  // plus the swatch before it.
  const size_t rect = svg.find("<rect class=\"legend\"");
  ASSERT_NE(rect, std::string::npos);
  const std::string element = svg.substr(rect, svg.find('>', rect) - rect);
  EXPECT_NEAR(Attribute(element, "width"), box.width, 0.051);
  const double svg_width = Attribute(svg.substr(0, svg.find('>', svg.find("<svg"))), "width");
  EXPECT_GE(svg_width, box.x + box.width);  // the box itself is inside the picture
  for (const PlotLine& l : lines) {
    // Each label is drawn whole, once, inside the box.
    const std::string text = ">" + l.label + "</text>";
    const size_t at = svg.find(text);
    ASSERT_NE(at, std::string::npos) << l.label;
    EXPECT_EQ(svg.find(text, at + 1), std::string::npos) << l.label;
    const size_t open = svg.rfind("<text class=\"legend-label\"", at);
    ASSERT_NE(open, std::string::npos);
    const double x = Attribute(svg.substr(open, at - open), "x");
    EXPECT_LE(x + EstimateTextWidth(l.label, kLegendFontPx), box.x + box.width) << l.label;
    const double y = Attribute(svg.substr(open, at - open), "y");
    EXPECT_LE(y, box.y + box.height) << l.label;
  }
  EXPECT_GE(box.height, 3 * 12.0);
}

TEST(AnalyzePlotTest, ManySeriesGrowThePicture) {
  std::vector<PlotLine> lines;
  for (int i = 0; i < 40; ++i) lines.push_back({"instances=" + std::to_string(i), {{1.0 * i, 1}}});
  const std::string svg = FormatLatencyPlot(lines, "t");
  const LegendBox box = LayoutLegend(lines);
  const double height = Attribute(svg.substr(0, svg.find('>', svg.find("<svg"))), "height");
  EXPECT_GE(height, box.y + box.height);
  EXPECT_THAT(svg, HasSubstr(">instances=39</text>"));
}

TEST(AnalyzePlotTest, LabelsAreEscaped) {
  const std::string svg = FormatLatencyPlot({{"a<b & \"c\"", {{1, 1}}}}, "x < y");
  EXPECT_THAT(svg, HasSubstr(">a&lt;b &amp; &quot;c&quot;</text>"));
  EXPECT_THAT(svg, HasSubstr(">x &lt; y</text>"));
}

}  // namespace
}  // namespace infera::analyze
