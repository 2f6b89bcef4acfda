// The report of an `infera analyze` run: a Markdown table of every measured point
// (configuration, throughput, P50/P99, server CPU per request, objective met), the
// search summary (points measured vs the full grid, time taken, why it stopped) and
// the best configuration; and an SVG plot of latency vs throughput with one series per
// configuration (tools/bench's FormatSvgPlot).
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_ANALYZE_ANALYZE_REPORT_H_
#define INFERA_TOOLS_ANALYZE_ANALYZE_REPORT_H_

#include <optional>
#include <string>

#include "tools/analyze/objective.h"
#include "tools/analyze/search.h"

namespace infera::analyze {

struct AnalyzeRun {
  std::string model;
  std::string platform;
  Objective objective;
  SearchResult search;
  double search_seconds = 0;
  int cores = 0;
  double time_per_point_s = 0;
  std::string error;  // a fatal problem that ended the run early (server died...)
  // --baseline: the model's own config.pbtxt, measured the same way before the search
  // (row 0 of the table; not a search point).
  std::optional<PointResult> baseline;
};

// The Markdown report (also printed to stdout).
std::string FormatReport(const AnalyzeRun& run);

// The plot: the objective's latency percentile vs throughput, one series per loaded point.
std::string FormatPlot(const AnalyzeRun& run);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_ANALYZE_REPORT_H_
