// Test helper (gtest): checks that an SVG from FormatSvgPlot shows every legend label
// whole inside its legend box, and the box inside the picture. Used by bench's and
// analyze's plot tests, so both check the same thing.
#ifndef INFERA_TOOLS_BENCH_SVG_PLOT_TESTING_H_
#define INFERA_TOOLS_BENCH_SVG_PLOT_TESTING_H_

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tools/bench/svg_plot.h"

namespace infera::bench::plot_testing {

// The numeric attribute `name` of the element starting at `element` (up to its '>').
inline double SvgAttribute(const std::string& svg, size_t element, const std::string& name) {
  const std::string tag = svg.substr(element, svg.find('>', element) - element);
  std::smatch m;
  if (!std::regex_search(tag, m, std::regex(" " + name + "=\"([0-9.]+)\""))) {
    ADD_FAILURE() << "no " << name << " in " << tag;
    return -1;
  }
  return std::stod(m[1]);
}

// `labels` as the legend shows them (already XML-escaped where they need it).
inline void ExpectLegendFits(const std::string& svg, const std::vector<std::string>& labels) {
  const size_t rect = svg.find("<rect class=\"legend\"");
  ASSERT_NE(rect, std::string::npos) << "no legend box";
  const double box_x = SvgAttribute(svg, rect, "x"), box_y = SvgAttribute(svg, rect, "y");
  const double box_w = SvgAttribute(svg, rect, "width"), box_h = SvgAttribute(svg, rect, "height");
  const size_t root = svg.find("<svg");
  EXPECT_GE(SvgAttribute(svg, root, "width"), box_x + box_w) << "the legend box is cut off";
  EXPECT_GE(SvgAttribute(svg, root, "height"), box_y + box_h) << "the legend box is cut off";
  double longest = 0;
  for (const std::string& label : labels) {
    longest = std::max(longest, EstimateTextWidth(label, kLegendFontPx));
    // Drawn whole (the element's text is the entire label), once, inside the box.
    const std::string text = ">" + label + "</text>";
    const size_t at = svg.find(text);
    ASSERT_NE(at, std::string::npos) << "label not shown whole: " << label;
    EXPECT_EQ(svg.find(text, at + 1), std::string::npos) << label;
    const size_t open = svg.rfind("<text class=\"legend-label\"", at);
    ASSERT_NE(open, std::string::npos) << label;
    ASSERT_EQ(svg.find('>', open), at) << "not a legend label: " << label;
    const double x = SvgAttribute(svg, open, "x"), y = SvgAttribute(svg, open, "y");
    EXPECT_GE(x, box_x) << label;
    EXPECT_LE(x + EstimateTextWidth(label, kLegendFontPx), box_x + box_w) << label;
    EXPECT_LE(y, box_y + box_h) << label;
  }
  EXPECT_GE(box_w, longest) << "the legend box is narrower than its longest label";
}

}  // namespace infera::bench::plot_testing

#endif  // INFERA_TOOLS_BENCH_SVG_PLOT_TESTING_H_
