// The writers of a RunReport: a human table, CSV (one row per level), JSON (the whole
// report) and a self-contained SVG plot of latency vs throughput.
//
//   table  what a person reads at the end of a run; the server breakdown (queue vs
//          compute, per request) follows when the server has statistics.
//   CSV    perf_analyzer-like columns; latencies in microseconds.
//   JSON   every field of RunReport (run_report.h), for scripts; numbers in the units
//          their names say (_us, _per_s, _pct).
//   SVG    P50, P90 and P99 of the run's levels against throughput, drawn by
//          FormatSvgPlot (svg_plot.h).
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_REPORT_WRITERS_H_
#define INFERA_TOOLS_BENCH_REPORT_WRITERS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/bench/run_report.h"
#include "tools/bench/svg_plot.h"

namespace infera::bench {

// The whole table: FormatTableTitle, the level header and rows, FormatTableSummary.
std::string FormatTable(const RunReport& report);
// What the run measures (model, protocol, data, mode), ending in a blank line.
std::string FormatTableTitle(const RunReport& report);
// After the level rows: the server side, streaming and error sections and the totals.
std::string FormatTableSummary(const RunReport& report);
// The column header and one row of the level table (printed as each level finishes).
std::string FormatLevelHeader(const RunReport& report);
std::string FormatLevelLine(const RunReport& report, const LevelResult& level);
std::string FormatCsv(const RunReport& report);
std::string FormatJson(const RunReport& report);

// P50 / P90 / P99 of the report's levels: latency (ms) against throughput (requests/s),
// FormatSvgPlot's default axes.
std::vector<PlotSeries> LatencySeries(const RunReport& report);

// Writes `text` to `path`; errors name the path.
absl::Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_REPORT_WRITERS_H_
