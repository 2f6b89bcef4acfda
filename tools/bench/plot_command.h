// `infera bench plot`: one latency-vs-throughput SVG from several saved reports
// (`infera bench --json`), e.g. infera against a baseline:
//
//   infera bench plot -o cmp.svg --title "ranker" infera=infera.json flask=flask.json
//
// Each NAME=REPORT.json adds two series, "NAME P50" and "NAME P99", over the report's
// levels. Exit status 0, or 2 for bad arguments or unreadable reports.
//
// Thread-safe (no shared state).
#ifndef INFERA_TOOLS_BENCH_PLOT_COMMAND_H_
#define INFERA_TOOLS_BENCH_PLOT_COMMAND_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/report_writers.h"

namespace infera::bench {

// The P50 and P99 series of one saved JSON report.
absl::StatusOr<std::vector<PlotSeries>> SeriesFromReportJson(const std::string& name, std::string_view json);

int RunPlotCommand(const std::vector<std::string>& args);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_PLOT_COMMAND_H_
