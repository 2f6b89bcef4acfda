// `infera bench plot`: one latency-vs-throughput SVG from several saved reports
// (`infera bench --json`), e.g. infera against a baseline:
//
//   infera bench plot -o cmp.svg --title "ranker" infera=infera.json flask=flask.json
//
// Each NAME=REPORT.json adds two series, "NAME P50" and "NAME P99", over the report's
// levels. A NAME may itself contain '=' (e.g. "instances=1=run.json"): the argument is
// split at the first '=' whose right side names a readable file. Exit status 0, or 2 for
// bad arguments or unreadable reports (one line, then "see 'infera bench --help'").
//
// Thread-safe (no shared state).
#ifndef INFERA_TOOLS_BENCH_PLOT_COMMAND_H_
#define INFERA_TOOLS_BENCH_PLOT_COMMAND_H_

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/report_writers.h"

namespace infera::bench {

// The P50 and P99 series of one saved JSON report.
absl::StatusOr<std::vector<PlotSeries>> SeriesFromReportJson(const std::string& name, std::string_view json);

// Splits NAME=REPORT.json at the first '=' after which `readable` accepts the path; an
// error names the argument when no split gives a NAME and a readable REPORT.
absl::StatusOr<std::pair<std::string, std::string>> SplitNamedReport(
    std::string_view arg, const std::function<bool(const std::string&)>& readable);

int RunPlotCommand(const std::vector<std::string>& args);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_PLOT_COMMAND_H_
