// A line chart as one self-contained SVG 1.1 document (no scripts, no external
// resources). Every plot infera writes goes through FormatSvgPlot: `infera bench
// --plot`, `infera bench plot` and `infera analyze`'s latency_throughput.svg, so they
// share one layout:
//
//   axes    each named with its unit ("throughput (requests/s)", "latency (ms)"), with
//           round ticks (1, 2, 2.5 or 5 x 10^k) from 0 to just above the largest value.
//   legend  to the right of the plot, in a box sized from its longest label so that every
//           label is shown whole (analyze's labels such as "3: instances=2 batch=16
//           queue_delay_us=400 precision=int8_dynamic" are long; a fixed box clipped them
//           all to the same prefix). The picture grows to hold the box and every row.
//
// Text widths are estimated (SVG has no layout before it is rendered):
// EstimateTextWidth over-estimates a sans-serif font's advance, so boxes sized from it
// hold the text.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_SVG_PLOT_H_
#define INFERA_TOOLS_BENCH_SVG_PLOT_H_

#include <string>
#include <string_view>
#include <vector>

namespace infera::bench {

struct PlotPoint {
  double x = 0;       // in PlotAxes::x_unit
  double y = 0;       // in PlotAxes::y_unit
  std::string label;  // in the point's tooltip, e.g. "c=16"; may be empty
};

struct PlotSeries {
  std::string name;  // the legend label
  std::vector<PlotPoint> points;
};

// What the axes measure, each drawn as "name (unit)".
struct PlotAxes {
  std::string x_name = "throughput", x_unit = "requests/s";
  std::string y_name = "latency", y_unit = "ms";
};

// Upper estimate of the width in px of `text` drawn in a sans-serif font of `font_px`.
double EstimateTextWidth(std::string_view text, double font_px);

// Where the legend box goes (exposed for tests: the labels must fit in it).
struct LegendBox {
  double x = 0, y = 0, width = 0, height = 0;
};
inline constexpr double kLegendFontPx = 12;
LegendBox LayoutLegend(const std::vector<PlotSeries>& series);

// The whole SVG document. Non-finite values do not stretch the axes.
std::string FormatSvgPlot(const std::vector<PlotSeries>& series, const std::string& title,
                          const PlotAxes& axes = {});

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_SVG_PLOT_H_
