#include "tools/bench/svg_plot.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "common/str_cat.h"

namespace infera::bench {
namespace {

constexpr double kLeft = 70, kTop = 50, kPlotWidth = 560, kPlotHeight = 360, kBottom = 60;
constexpr double kLegendGap = 24, kLegendPad = 10, kSwatch = 28, kSwatchGap = 6, kRow = 20;
constexpr double kTitlePx = 15;
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string F(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", v);
  return buffer;
}

// A tick or tooltip value: shortest form, thousands as "k" ("2.5k").
std::string Tick(double v) {
  char buffer[32];
  if (std::abs(v) >= 1000) {
    std::snprintf(buffer, sizeof(buffer), "%gk", v / 1000);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%g", v);
  }
  return buffer;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A round step giving about `ticks` ticks up to `top`.
double NiceStep(double top, int ticks) {
  const double raw = top / ticks;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * magnitude) return m * magnitude;
  }
  return 10 * magnitude;
}

// One axis: its round step and the top of its range (a whole number of steps).
struct Scale {
  double step = 1, top = 1;
};

Scale ScaleFor(double max) {
  const double reach = max > 0 ? max * 1.05 : 1;
  Scale s;
  s.step = NiceStep(reach, 6);
  s.top = std::ceil(reach / s.step) * s.step;
  return s;
}

}  // namespace

double EstimateTextWidth(std::string_view text, double font_px) {
  // Advance widths of a typical sans-serif (DejaVu Sans, the widest common default),
  // rounded up, in em: wide capitals and m/w, narrow punctuation, the rest 0.66.
  double em = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte: counted with its lead
    if (c == 'm' || c == 'w' || c == 'M' || c == 'W') {
      em += 0.98;
    } else if (std::isupper(c) || c == '_' || c == '=' || c == '<' || c == '>') {
      em += 0.84;
    } else if (c == 'i' || c == 'l' || c == 'j' || c == '.' || c == ',' || c == ':' || c == '\'' || c == '|') {
      em += 0.34;
    } else {
      em += 0.66;
    }
  }
  return em * font_px;
}

LegendBox LayoutLegend(const std::vector<PlotSeries>& series) {
  double longest = 0;
  for (const PlotSeries& s : series) longest = std::max(longest, EstimateTextWidth(s.name, kLegendFontPx));
  LegendBox box;
  box.x = kLeft + kPlotWidth + kLegendGap;
  box.y = kTop;
  box.width = kLegendPad + kSwatch + kSwatchGap + longest + kLegendPad;
  box.height = kLegendPad * 2 + kRow * static_cast<double>(std::max<size_t>(1, series.size())) - 6;
  return box;
}

std::string FormatSvgPlot(const std::vector<PlotSeries>& series, const std::string& title, const PlotAxes& axes) {
  double max_x = 0, max_y = 0;
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) {
      if (std::isfinite(p.x)) max_x = std::max(max_x, p.x);
      if (std::isfinite(p.y)) max_y = std::max(max_y, p.y);
    }
  }
  const Scale sx = ScaleFor(max_x), sy = ScaleFor(max_y);
  auto X = [&](double v) { return kLeft + v / sx.top * kPlotWidth; };
  auto Y = [&](double v) { return kTop + kPlotHeight - v / sy.top * kPlotHeight; };

  const LegendBox legend = LayoutLegend(series);
  const double width = std::max(legend.x + legend.width + 12, EstimateTextWidth(title, kTitlePx) + 40);
  const double height = std::max(kTop + kPlotHeight + kBottom, legend.y + legend.height + 12);
  std::string svg = StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"",
      F(width), "\" height=\"", F(height), "\" viewBox=\"0 0 ", F(width), " ", F(height),
      "\" font-family=\"sans-serif\" font-size=\"", F(kLegendFontPx), "\">\n<rect x=\"0\" y=\"0\" width=\"", F(width),
      "\" height=\"", F(height), "\" fill=\"white\"/>\n<text x=\"", F(width / 2), "\" y=\"26\" text-anchor=\"middle\" font-size=\"",
      F(kTitlePx), "\">", Escape(title), "</text>\n");
  // Grid and tick values, then the axis names with their units.
  for (double v = 0; v <= sx.top + sx.step / 2; v += sx.step) {
    svg += StrCat("<line x1=\"", F(X(v)), "\" y1=\"", F(kTop), "\" x2=\"", F(X(v)), "\" y2=\"", F(kTop + kPlotHeight),
                  "\" stroke=\"#e0e0e0\"/>\n<text x=\"", F(X(v)), "\" y=\"", F(kTop + kPlotHeight + 18),
                  "\" text-anchor=\"middle\">", Tick(v), "</text>\n");
  }
  for (double v = 0; v <= sy.top + sy.step / 2; v += sy.step) {
    svg += StrCat("<line x1=\"", F(kLeft), "\" y1=\"", F(Y(v)), "\" x2=\"", F(kLeft + kPlotWidth), "\" y2=\"", F(Y(v)),
                  "\" stroke=\"#e0e0e0\"/>\n<text x=\"", F(kLeft - 8), "\" y=\"", F(Y(v) + 4), "\" text-anchor=\"end\">",
                  Tick(v), "</text>\n");
  }
  svg += StrCat("<rect x=\"", F(kLeft), "\" y=\"", F(kTop), "\" width=\"", F(kPlotWidth), "\" height=\"", F(kPlotHeight),
                "\" fill=\"none\" stroke=\"#333\"/>\n<text class=\"axis-name\" x=\"", F(kLeft + kPlotWidth / 2), "\" y=\"",
                F(kTop + kPlotHeight + 42), "\" text-anchor=\"middle\">", Escape(axes.x_name), " (",
                Escape(axes.x_unit), ")</text>\n", "<text class=\"axis-name\" transform=\"translate(20,",
                F(kTop + kPlotHeight / 2), ") rotate(-90)\" text-anchor=\"middle\">", Escape(axes.y_name), " (",
                Escape(axes.y_unit), ")</text>\n");
  svg += StrCat("<rect class=\"legend\" x=\"", F(legend.x), "\" y=\"", F(legend.y), "\" width=\"", F(legend.width),
                "\" height=\"", F(legend.height), "\" fill=\"white\" stroke=\"#999\"/>\n");
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    const std::string color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
    std::string points;
    for (const PlotPoint& p : s.points) points += StrCat(F(X(p.x)), ",", F(Y(p.y)), " ");
    if (!points.empty()) points.pop_back();
    svg += StrCat("<g>\n<polyline fill=\"none\" stroke=\"", color, "\" stroke-width=\"2\" points=\"", points, "\"/>\n");
    for (const PlotPoint& p : s.points) {
      svg += StrCat("<circle cx=\"", F(X(p.x)), "\" cy=\"", F(Y(p.y)), "\" r=\"3.5\" fill=\"", color, "\"><title>",
                    Escape(s.name), p.label.empty() ? "" : " ", Escape(p.label), ": ", F(p.x), " ",
                    Escape(axes.x_unit), ", ", Tick(std::round(p.y * 1000) / 1000), " ", Escape(axes.y_unit),
                    "</title></circle>\n");
    }
    const double row = legend.y + kLegendPad + 6 + kRow * static_cast<double>(i);
    const double swatch_x = legend.x + kLegendPad;
    svg += StrCat("<line x1=\"", F(swatch_x), "\" y1=\"", F(row), "\" x2=\"", F(swatch_x + kSwatch), "\" y2=\"", F(row),
                  "\" stroke=\"", color, "\" stroke-width=\"2\"/>\n<text class=\"legend-label\" x=\"",
                  F(swatch_x + kSwatch + kSwatchGap), "\" y=\"", F(row + 4), "\">", Escape(s.name), "</text>\n</g>\n");
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace infera::bench
