// The SVG plot of an `infera analyze` run: latency (the objective's percentile) vs
// throughput, one series per measured configuration, with a legend sized from its
// longest label so that every label is shown whole (labels like
// "3: instances=2 batch=16 queue_delay_us=400 precision=int8_dynamic" are long; a fixed
// legend box clipped them all to the same prefix).
//
// Text widths are estimated (SVG has no layout before rendering): EstimateTextWidth
// over-estimates a sans-serif font's advance, so the estimate is a safe box size.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_ANALYZE_ANALYZE_PLOT_H_
#define INFERA_TOOLS_ANALYZE_ANALYZE_PLOT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace infera::analyze {

struct PlotLine {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (throughput req/s, latency ms)
};

// Upper estimate of the width in px of `text` drawn in a sans-serif font of `font_px`.
double EstimateTextWidth(std::string_view text, double font_px);

// Where the legend goes (exposed for the test).
struct LegendBox {
  double x = 0, y = 0, width = 0, height = 0;
};
inline constexpr double kLegendFontPx = 12;
LegendBox LayoutLegend(const std::vector<PlotLine>& lines);

// The whole SVG document.
std::string FormatLatencyPlot(const std::vector<PlotLine>& lines, const std::string& title);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_ANALYZE_PLOT_H_
