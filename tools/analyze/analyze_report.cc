#include "tools/analyze/analyze_report.h"

#include <cstdio>

#include "common/str_cat.h"
#include "tools/bench/report_writers.h"

namespace infera::analyze {
namespace {

std::string Fixed(double v, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, v);
  return buffer;
}

// Table cells must not break the Markdown row.
std::string Cell(std::string text) {
  for (char& c : text) {
    if (c == '|' || c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

std::string Percentile(const Objective& o) { return StrCat("P", static_cast<int>(o.percentile)); }

}  // namespace

std::string FormatReport(const AnalyzeRun& run) {
  const SearchResult& s = run.search;
  std::string out = StrCat("# infera analyze: ", run.model, "\n\n");
  out += StrCat("- objective: `", run.objective.ToString(), "`\n");
  out += StrCat("- platform: ", run.platform.empty() ? "-" : run.platform, ", cores: ", run.cores,
                ", time per point: ", Fixed(run.time_per_point_s, 1), " s\n");
  out += StrCat("- measured ", s.measured.size(), " points of a full grid of ", s.full_grid, " in ",
                Fixed(run.search_seconds, 1), " s", s.stop_reason.empty() ? "" : StrCat(" (stopped: ", s.stop_reason, ")"),
                "\n");
  if (!run.error.empty()) out += StrCat("- **error**: ", Cell(run.error), "\n");
  // The objective's percentile gets its own column unless it is P50 or P99 (shown anyway).
  const bool extra = run.objective.percentile != 50 && run.objective.percentile != 99;
  out += StrCat("\n| # | configuration | searching | throughput (req/s) | P50 (ms) | P99 (ms) | ",
                extra ? Percentile(run.objective) + " (ms) | " : "",
                "concurrency | server CPU (µs/req) | objective |\n");
  out += StrCat("|---|---|---|---|---|---|", extra ? "---|" : "", "---|---|---|\n");
  std::vector<MeasuredPoint> rows;
  if (run.baseline) rows.push_back({{}, "the model's own config.pbtxt", "baseline", *run.baseline});
  rows.insert(rows.end(), s.measured.begin(), s.measured.end());
  const size_t first = run.baseline ? 1 : 0;  // row numbers: the baseline is 0
  for (size_t i = 0; i < rows.size(); ++i) {
    const MeasuredPoint& m = rows[i];
    const PointResult& r = m.result;
    const size_t number = i + 1 - first;
    std::string verdict = !r.loaded ? StrCat("failed: ", Cell(r.error)) : r.met ? "met" : "not met";
    if (i >= first && static_cast<int>(i - first) == s.best) verdict += " **(best)**";
    if (!r.loaded) {
      out += StrCat("| ", number, " | ", m.label, " | ", m.dimension, " | - | - | - | ", extra ? "- | " : "", "- | - | ",
                    verdict, " |\n");
      continue;
    }
    out += StrCat("| ", number, " | ", m.label, " | ", m.dimension, " | ", Fixed(r.throughput_rps, 1), " | ",
                  Fixed(r.p50_ms, 2), " | ", Fixed(r.p99_ms, 2), " | ",
                  extra ? Fixed(r.objective_latency_ms, 2) + " | " : "",
                  r.concurrency > 0 ? std::to_string(r.concurrency) : "open loop", " | ",
                  r.server_cpu_us_per_request ? Fixed(*r.server_cpu_us_per_request, 0) : "-", " | ", verdict, " |\n");
  }
  out += "\n";
  if (s.best < 0 || !s.measured[s.best].result.loaded) {
    out += "No configuration could be measured.\n";
    return out;
  }
  const MeasuredPoint& best = s.measured[s.best];
  if (best.result.met) {
    out += StrCat("Best: `", best.label, "` — ", Fixed(best.result.throughput_rps, 1), " req/s at ",
                  Percentile(run.objective), " ", Fixed(best.result.objective_latency_ms, 2), " ms (objective met).\n");
    if (run.baseline && run.baseline->loaded) {
      const PointResult& b = *run.baseline;
      out += StrCat("The model's own config.pbtxt: ", Fixed(b.throughput_rps, 1), " req/s at ", Percentile(run.objective),
                    " ", Fixed(b.objective_latency_ms, 2), " ms (objective ", b.met ? "met" : "not met", ")",
                    b.met && b.throughput_rps > 0 && run.objective.kind == Objective::Kind::kMaxThroughput
                        ? StrCat("; the best is ", Fixed(best.result.throughput_rps / b.throughput_rps, 2), "x its throughput")
                        : std::string(),
                    ".\n");
    }
  } else {
    out += StrCat("Objective not met by any configuration. Best effort: `", best.label, "` — ",
                  Fixed(best.result.throughput_rps, 1), " req/s at ", Percentile(run.objective), " ",
                  Fixed(best.result.objective_latency_ms, 2), " ms.\n");
  }
  return out;
}

std::string FormatPlot(const AnalyzeRun& run) {
  std::vector<bench::PlotSeries> series;
  for (const MeasuredPoint& m : run.search.measured) {
    if (!m.result.loaded || m.result.curve.empty()) continue;
    bench::PlotSeries one;
    one.name = m.label;
    for (const auto& [throughput, latency] : m.result.curve) one.points.push_back({throughput, latency, ""});
    series.push_back(std::move(one));
  }
  return bench::FormatSvgPlot(series, StrCat(run.model, ": ", Percentile(run.objective),
                                             " latency vs throughput per configuration (", run.objective.ToString(), ")"));
}

}  // namespace infera::analyze
