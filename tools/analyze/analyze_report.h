// The report of an `infera analyze` run: a Markdown table of every measured point
// (configuration, median throughput and latencies with their min-max over the repeats,
// the relative spread, server CPU per request, the verdict: met / within noise / not
// met), a warning naming the points whose spread is above kLargeSpreadPct, the search summary
// (points measured vs the full grid, time taken, why it stopped), the best
// configuration, and exactly what the written config.pbtxt changes (field: before ->
// after; when --allow-api-change narrowed the API, which requests clients can no longer
// send). And an SVG plot of latency vs throughput with one series per configuration
// (drawn by bench's FormatSvgPlot, tools/bench/svg_plot.h).
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_ANALYZE_ANALYZE_REPORT_H_
#define INFERA_TOOLS_ANALYZE_ANALYZE_REPORT_H_

#include <optional>
#include <string>

#include "tools/analyze/config_edit.h"
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
  int repeats = 0;
  bool allow_api_change = false;
  int64_t original_max_batch_size = 0;
  // The best point's config against the model's own (empty: no best point).
  std::vector<FieldChange> changes;
  bool have_best_config = false;
  std::string error;  // a fatal problem that ended the run early (server died...)
  // --baseline: the model's own config.pbtxt, measured the same way before the search
  // (row 0 of the table; not a search point).
  std::optional<PointResult> baseline;
};

// The Markdown report (also printed to stdout).
std::string FormatReport(const AnalyzeRun& run);

// The "what the written config.pbtxt changes" section (part of FormatReport).
std::string FormatChanges(const AnalyzeRun& run);

// The plot: the objective's latency percentile vs throughput, one series per loaded point.
std::string FormatPlot(const AnalyzeRun& run);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_ANALYZE_REPORT_H_
