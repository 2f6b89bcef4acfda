// FormatSvgPlot / LatencySeries: the latency-vs-throughput plot.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/str_cat.h"
#include "tools/bench/report_writers.h"

namespace infera::bench {
namespace {

constexpr double kWidth = 800, kHeight = 500;
constexpr double kLeft = 70, kRight = 170, kTop = 45, kBottom = 55;  // margins
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#d62728", "#2ca02c",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string F(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", v);
  return buffer;
}

std::string Label(double v) {
  char buffer[32];
  if (v == 0) return "0";
  if (std::abs(v) >= 1000) {
    std::snprintf(buffer, sizeof(buffer), "%gk", v / 1000);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%g", v);
  }
  return buffer;
}

std::string Escape(const std::string& s) {
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

// A "nice" tick step (1, 2 or 5 x 10^k) giving about `ticks` intervals up to `max`.
double NiceStep(double max, int ticks) {
  const double raw = max / ticks;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * magnitude) return m * magnitude;
  }
  return 10 * magnitude;
}

}  // namespace

std::vector<PlotSeries> LatencySeries(const RunReport& report) {
  std::vector<PlotSeries> series = {{"P50", {}}, {"P90", {}}, {"P99", {}}};
  for (const LevelResult& l : report.levels) {
    if (l.latency.count == 0) continue;
    const std::string label = l.concurrency > 0 ? StrCat("c=", l.concurrency) : StrCat(l.request_rate, "/s");
    series[0].points.push_back({l.throughput_rps, l.latency.p50_us / 1000, label});
    series[1].points.push_back({l.throughput_rps, l.latency.p90_us / 1000, label});
    series[2].points.push_back({l.throughput_rps, l.latency.p99_us / 1000, label});
  }
  return series;
}

std::string FormatSvgPlot(const std::vector<PlotSeries>& series, const std::string& title) {
  double max_x = 0, max_y = 0;
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) {
      max_x = std::max(max_x, p.throughput);
      max_y = std::max(max_y, p.latency_ms);
    }
  }
  const double step_x = NiceStep(max_x > 0 ? max_x * 1.05 : 1, 6);
  const double step_y = NiceStep(max_y > 0 ? max_y * 1.05 : 1, 6);
  const double top_x = std::ceil((max_x > 0 ? max_x * 1.05 : 1) / step_x) * step_x;
  const double top_y = std::ceil((max_y > 0 ? max_y * 1.05 : 1) / step_y) * step_y;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto X = [&](double v) { return kLeft + v / top_x * plot_w; };
  auto Y = [&](double v) { return kTop + plot_h - v / top_y * plot_h; };

  std::string svg = StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"", F(kWidth), "\" height=\"",
      F(kHeight), "\" viewBox=\"0 0 ", F(kWidth), " ", F(kHeight), "\" font-family=\"sans-serif\" font-size=\"12\">\n",
      "<rect x=\"0\" y=\"0\" width=\"", F(kWidth), "\" height=\"", F(kHeight), "\" fill=\"white\"/>\n",
      "<text x=\"", F(kWidth / 2), "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">", Escape(title), "</text>\n");
  // Grid and ticks.
  for (double v = 0; v <= top_x + step_x / 2; v += step_x) {
    svg += StrCat("<line x1=\"", F(X(v)), "\" y1=\"", F(kTop), "\" x2=\"", F(X(v)), "\" y2=\"", F(kTop + plot_h),
                  "\" stroke=\"#e0e0e0\"/>\n<text x=\"", F(X(v)), "\" y=\"", F(kTop + plot_h + 18),
                  "\" text-anchor=\"middle\">", Label(v), "</text>\n");
  }
  for (double v = 0; v <= top_y + step_y / 2; v += step_y) {
    svg += StrCat("<line x1=\"", F(kLeft), "\" y1=\"", F(Y(v)), "\" x2=\"", F(kLeft + plot_w), "\" y2=\"", F(Y(v)),
                  "\" stroke=\"#e0e0e0\"/>\n<text x=\"", F(kLeft - 8), "\" y=\"", F(Y(v) + 4),
                  "\" text-anchor=\"end\">", Label(v), "</text>\n");
  }
  svg += StrCat("<rect x=\"", F(kLeft), "\" y=\"", F(kTop), "\" width=\"", F(plot_w), "\" height=\"", F(plot_h),
                "\" fill=\"none\" stroke=\"#333\"/>\n",
                "<text x=\"", F(kLeft + plot_w / 2), "\" y=\"", F(kHeight - 14),
                "\" text-anchor=\"middle\">throughput (requests/s)</text>\n",
                "<text transform=\"translate(18,", F(kTop + plot_h / 2),
                ") rotate(-90)\" text-anchor=\"middle\">latency (ms)</text>\n");
  // Series.
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    const std::string color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
    std::string points;
    for (const PlotPoint& p : s.points) points += StrCat(F(X(p.throughput)), ",", F(Y(p.latency_ms)), " ");
    if (!points.empty()) points.pop_back();
    svg += StrCat("<g>\n<polyline fill=\"none\" stroke=\"", color, "\" stroke-width=\"2\" points=\"", points, "\"/>\n");
    for (const PlotPoint& p : s.points) {
      svg += StrCat("<circle cx=\"", F(X(p.throughput)), "\" cy=\"", F(Y(p.latency_ms)), "\" r=\"3.5\" fill=\"", color,
                    "\"><title>", Escape(s.name), " ", Escape(p.label), ": ", F(p.throughput), " req/s, ",
                    Label(std::round(p.latency_ms * 1000) / 1000), " ms</title></circle>\n");
    }
    const double ly = kTop + 10 + 20 * static_cast<double>(i);
    svg += StrCat("<line x1=\"", F(kWidth - kRight + 15), "\" y1=\"", F(ly), "\" x2=\"", F(kWidth - kRight + 40),
                  "\" y2=\"", F(ly), "\" stroke=\"", color, "\" stroke-width=\"2\"/>\n<text x=\"",
                  F(kWidth - kRight + 46), "\" y=\"", F(ly + 4), "\">", Escape(s.name), "</text>\n</g>\n");
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace infera::bench
