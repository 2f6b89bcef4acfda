#include "tools/analyze/analyze_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/str_cat.h"

namespace infera::analyze {
namespace {

constexpr double kLeft = 70, kTop = 50, kPlotWidth = 560, kPlotHeight = 360, kBottom = 60;
constexpr double kLegendGap = 24, kLegendPad = 10, kSwatch = 28, kRow = 20;
constexpr double kTitlePx = 15;
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string F(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", v);
  return buffer;
}

std::string Tick(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", v);
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

}  // namespace

double EstimateTextWidth(std::string_view text, double font_px) {
  // Advance widths of a typical sans-serif (DejaVu Sans, the widest common default),
  // rounded up, in em: wide capitals and m/w, narrow punctuation, the rest 0.62.
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

LegendBox LayoutLegend(const std::vector<PlotLine>& lines) {
  double longest = 0;
  for (const PlotLine& l : lines) longest = std::max(longest, EstimateTextWidth(l.label, kLegendFontPx));
  LegendBox box;
  box.x = kLeft + kPlotWidth + kLegendGap;
  box.y = kTop;
  box.width = kLegendPad + kSwatch + 6 + longest + kLegendPad;
  box.height = kLegendPad * 2 + kRow * static_cast<double>(std::max<size_t>(1, lines.size())) - 6;
  return box;
}

std::string FormatLatencyPlot(const std::vector<PlotLine>& lines, const std::string& title) {
  double max_x = 0, max_y = 0;
  for (const PlotLine& l : lines) {
    for (const auto& [x, y] : l.points) {
      if (std::isfinite(x)) max_x = std::max(max_x, x);
      if (std::isfinite(y)) max_y = std::max(max_y, y);
    }
  }
  const double step_x = NiceStep(max_x > 0 ? max_x * 1.05 : 1, 6);
  const double step_y = NiceStep(max_y > 0 ? max_y * 1.05 : 1, 6);
  const double top_x = std::ceil((max_x > 0 ? max_x * 1.05 : 1) / step_x) * step_x;
  const double top_y = std::ceil((max_y > 0 ? max_y * 1.05 : 1) / step_y) * step_y;
  auto X = [&](double v) { return kLeft + v / top_x * kPlotWidth; };
  auto Y = [&](double v) { return kTop + kPlotHeight - v / top_y * kPlotHeight; };

  const LegendBox legend = LayoutLegend(lines);
  const double width = std::max(legend.x + legend.width + 12, EstimateTextWidth(title, kTitlePx) + 40);
  const double height = std::max(kTop + kPlotHeight + kBottom, legend.y + legend.height + 12);
  std::string svg = StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"",
      F(width), "\" height=\"", F(height), "\" viewBox=\"0 0 ", F(width), " ", F(height),
      "\" font-family=\"sans-serif\" font-size=\"", F(kLegendFontPx), "\">\n<rect x=\"0\" y=\"0\" width=\"", F(width),
      "\" height=\"", F(height), "\" fill=\"white\"/>\n<text x=\"", F(width / 2), "\" y=\"26\" text-anchor=\"middle\" font-size=\"",
      F(kTitlePx), "\">", Escape(title), "</text>\n");
  for (double v = 0; v <= top_x + step_x / 2; v += step_x) {
    svg += StrCat("<line x1=\"", F(X(v)), "\" y1=\"", F(kTop), "\" x2=\"", F(X(v)), "\" y2=\"", F(kTop + kPlotHeight),
                  "\" stroke=\"#e0e0e0\"/>\n<text x=\"", F(X(v)), "\" y=\"", F(kTop + kPlotHeight + 18),
                  "\" text-anchor=\"middle\">", Tick(v), "</text>\n");
  }
  for (double v = 0; v <= top_y + step_y / 2; v += step_y) {
    svg += StrCat("<line x1=\"", F(kLeft), "\" y1=\"", F(Y(v)), "\" x2=\"", F(kLeft + kPlotWidth), "\" y2=\"", F(Y(v)),
                  "\" stroke=\"#e0e0e0\"/>\n<text x=\"", F(kLeft - 8), "\" y=\"", F(Y(v) + 4), "\" text-anchor=\"end\">",
                  Tick(v), "</text>\n");
  }
  svg += StrCat("<rect x=\"", F(kLeft), "\" y=\"", F(kTop), "\" width=\"", F(kPlotWidth), "\" height=\"", F(kPlotHeight),
                "\" fill=\"none\" stroke=\"#333\"/>\n<text x=\"", F(kLeft + kPlotWidth / 2), "\" y=\"",
                F(kTop + kPlotHeight + 42), "\" text-anchor=\"middle\">throughput (requests/s)</text>\n",
                "<text transform=\"translate(20,", F(kTop + kPlotHeight / 2),
                ") rotate(-90)\" text-anchor=\"middle\">latency (ms)</text>\n");
  svg += StrCat("<rect class=\"legend\" x=\"", F(legend.x), "\" y=\"", F(legend.y), "\" width=\"", F(legend.width),
                "\" height=\"", F(legend.height), "\" fill=\"white\" stroke=\"#999\"/>\n");
  for (size_t i = 0; i < lines.size(); ++i) {
    const PlotLine& l = lines[i];
    const std::string color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
    std::string points;
    for (const auto& [x, y] : l.points) points += StrCat(F(X(x)), ",", F(Y(y)), " ");
    if (!points.empty()) points.pop_back();
    svg += StrCat("<g>\n<polyline fill=\"none\" stroke=\"", color, "\" stroke-width=\"2\" points=\"", points, "\"/>\n");
    for (const auto& [x, y] : l.points) {
      svg += StrCat("<circle cx=\"", F(X(x)), "\" cy=\"", F(Y(y)), "\" r=\"3.5\" fill=\"", color, "\"><title>",
                    Escape(l.label), ": ", F(x), " req/s, ", Tick(std::round(y * 1000) / 1000), " ms</title></circle>\n");
    }
    const double row = legend.y + kLegendPad + 6 + kRow * static_cast<double>(i);
    const double swatch_x = legend.x + kLegendPad;
    svg += StrCat("<line x1=\"", F(swatch_x), "\" y1=\"", F(row), "\" x2=\"", F(swatch_x + kSwatch), "\" y2=\"", F(row),
                  "\" stroke=\"", color, "\" stroke-width=\"2\"/>\n<text class=\"legend-label\" x=\"",
                  F(swatch_x + kSwatch + 6), "\" y=\"", F(row + 4), "\">", Escape(l.label), "</text>\n</g>\n");
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace infera::analyze
