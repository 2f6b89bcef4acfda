// LatencySeries: what `infera bench --plot` draws (FormatSvgPlot, svg_plot.h).
#include "common/str_cat.h"
#include "tools/bench/report_writers.h"

namespace infera::bench {

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

}  // namespace infera::bench
