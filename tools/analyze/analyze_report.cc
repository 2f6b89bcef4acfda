#include "tools/analyze/analyze_report.h"

#include <cstdio>

#include "common/str_cat.h"
#include "tools/bench/svg_plot.h"

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

namespace {

// "412.3 (405.1-420.0)": the median and, with more than one measurement, its range.
std::string WithRange(double median, const Spread& spread, int decimals) {
  if (spread.n < 2) return Fixed(median, decimals);
  return StrCat(Fixed(median, decimals), " (", Fixed(spread.min, decimals), "–", Fixed(spread.max, decimals), ")");
}

std::string SpreadCell(const Objective& objective, const PointResult& r) {
  if (r.repeats < 2) return StrCat("n=", r.repeats, ", unknown");
  const double pct = r.SpreadPct(objective);
  // A level some repeats did not reach (their sweep stopped below it) counts against the
  // bound: say how many measured it.
  const int measured = r.throughput_spread.n;
  return StrCat(Fixed(pct, pct < 10 ? 1 : 0), " %", pct > kLargeSpreadPct ? " ⚠" : "",
                measured < r.repeats ? StrCat(" (", measured, " of ", r.repeats, " reached it)") : "");
}

std::string VerdictText(const PointResult& r) {
  if (!r.loaded) return StrCat("failed: ", Cell(r.error));
  return VerdictName(r.verdict);
}

std::string Describe(const Objective& objective, const PointResult& r) {
  return StrCat(Fixed(r.throughput_rps, 1), " req/s at ", Percentile(objective), " ", Fixed(r.objective_latency_ms, 2),
                " ms");
}

}  // namespace

std::string FormatReport(const AnalyzeRun& run) {
  const SearchResult& s = run.search;
  std::string out = StrCat("# infera analyze: ", run.model, "\n\n");
  out += StrCat("- objective: `", run.objective.ToString(), "`\n");
  out += StrCat("- platform: ", run.platform.empty() ? "-" : run.platform, ", cores: ", run.cores,
                ", time per measurement: ", Fixed(run.time_per_point_s, 1), " s, measurements per point: ", run.repeats,
                "\n");
  out += StrCat("- measured ", s.measured.size(), " points of a full grid of ", s.full_grid, " in ",
                Fixed(run.search_seconds, 1), " s", s.stop_reason.empty() ? "" : StrCat(" (stopped: ", s.stop_reason, ")"),
                "\n");
  out += StrCat("- figures are medians over the measurements, (min–max) beside them; a bound is met only when every "
                "measurement meets it, within noise when the median does but not every measurement\n");
  if (run.objective.kind == Objective::Kind::kMinLatency) {
    out += StrCat("- the open loop offers ", Fixed(run.objective.min_rate * kRateHeadroom, 1), " req/s (",
                  Fixed((kRateHeadroom - 1) * 100, 0), " % above the bound), so that a configuration that keeps up measures above it\n");
  }
  if (!run.error.empty()) out += StrCat("- **error**: ", Cell(run.error), "\n");
  // The objective's percentile gets its own column unless it is P50 or P99 (shown anyway).
  const bool extra = run.objective.percentile != 50 && run.objective.percentile != 99;
  out += StrCat("\n| # | configuration | searching | throughput (req/s) | P50 (ms) | P99 (ms) | ",
                extra ? Percentile(run.objective) + " (ms) | " : "",
                "spread | concurrency | server CPU (µs/req) | objective |\n");
  out += StrCat("|---|---|---|---|---|---|", extra ? "---|" : "", "---|---|---|---|\n");
  std::vector<MeasuredPoint> rows;
  if (run.baseline) rows.push_back({{}, "the model's own config.pbtxt", "baseline", *run.baseline});
  rows.insert(rows.end(), s.measured.begin(), s.measured.end());
  const size_t first = run.baseline ? 1 : 0;  // row numbers: the baseline is 0
  std::vector<std::string> warnings;
  for (size_t i = 0; i < rows.size(); ++i) {
    const MeasuredPoint& m = rows[i];
    const PointResult& r = m.result;
    const size_t number = i + 1 - first;
    std::string verdict = VerdictText(r);
    if (i >= first && static_cast<int>(i - first) == s.best) verdict += " **(best)**";
    if (!r.loaded) {
      out += StrCat("| ", number, " | ", m.label, " | ", m.dimension, " | - | - | - | ", extra ? "- | " : "",
                    "- | - | - | ", verdict, " |\n");
      continue;
    }
    if (r.SpreadPct(run.objective) > kLargeSpreadPct) {
      warnings.push_back(StrCat("#", number, " (", Fixed(r.SpreadPct(run.objective), 0), " %)"));
    }
    const bool p50_judged = run.objective.percentile == 50, p99_judged = run.objective.percentile == 99;
    out += StrCat("| ", number, " | ", m.label, " | ", m.dimension, " | ",
                  WithRange(r.throughput_rps, r.throughput_spread, 1), " | ",
                  p50_judged ? WithRange(r.p50_ms, r.latency_spread, 2) : Fixed(r.p50_ms, 2), " | ",
                  p99_judged ? WithRange(r.p99_ms, r.latency_spread, 2) : Fixed(r.p99_ms, 2), " | ",
                  extra ? WithRange(r.objective_latency_ms, r.latency_spread, 2) + " | " : "", SpreadCell(run.objective, r), " | ",
                  r.concurrency > 0 ? std::to_string(r.concurrency) : "open loop", " | ",
                  r.server_cpu_us_per_request ? Fixed(*r.server_cpu_us_per_request, 0) : "-", " | ", verdict, " |\n");
  }
  out += "\n";
  if (!warnings.empty()) {
    out += StrCat("⚠ Measurements spread more than ", Fixed(kLargeSpreadPct, 0), " % (max − min over the median of the ",
                  run.objective.kind == Objective::Kind::kMaxThroughput ? "throughput" : "latency", ") at ",
                  StrJoin(warnings, ", "),
                  ": their rank among close points is uncertain; a longer --time-per-point or more --repeats "
                  "narrow it.\n\n");
  }
  if (s.best < 0 || !s.measured[s.best].result.loaded) {
    out += "No configuration could be measured.\n";
    return out;
  }
  const MeasuredPoint& best = s.measured[s.best];
  if (best.result.verdict != Verdict::kNotMet) {
    out += StrCat("Best: `", best.label, "` — ", Describe(run.objective, best.result),
                  best.result.met ? " (objective met).\n"
                                  : " (objective within noise: the median meets it, not every measurement).\n");
    if (run.baseline && run.baseline->loaded) {
      const PointResult& b = *run.baseline;
      out += StrCat("The model's own config.pbtxt: ", Describe(run.objective, b), " (objective ", VerdictName(b.verdict), ")",
                    b.verdict != Verdict::kNotMet && b.throughput_rps > 0 &&
                            run.objective.kind == Objective::Kind::kMaxThroughput
                        ? StrCat("; the best is ", Fixed(best.result.throughput_rps / b.throughput_rps, 2), "x its throughput")
                        : std::string(),
                    ".\n");
    }
  } else {
    out += StrCat("Objective not met by any configuration. Best effort: `", best.label, "` — ",
                  Describe(run.objective, best.result), ".\n");
  }
  if (run.have_best_config) out += FormatChanges(run);
  return out;
}

std::string FormatChanges(const AnalyzeRun& run) {
  std::string out = "\n## What the written config.pbtxt changes\n\n";
  if (run.changes.empty()) {
    out += "Nothing: the best configuration is the model's own config.pbtxt.\n";
  }
  int64_t new_max_batch = run.original_max_batch_size;
  for (const FieldChange& c : run.changes) {
    out += StrCat("- `", c.field, "`: ", c.before, " → ", c.after, "\n");
    if (c.field == "max_batch_size") new_max_batch = std::stoll(c.after);
  }
  if (new_max_batch < run.original_max_batch_size) {
    out += StrCat("\n**The API is narrower** (--allow-api-change): clients sending more than ", new_max_batch,
                  " rows in one request will be refused (max_batch_size ", run.original_max_batch_size, " → ",
                  new_max_batch, ").\n");
  } else {
    out += StrCat("\nWhat clients may send is unchanged",
                  run.original_max_batch_size > 0 ? StrCat(" (max_batch_size ", run.original_max_batch_size, " kept)") : "",
                  "; comments and every other field of the model's config.pbtxt are kept.\n");
  }
  return out;
}

std::string FormatPlot(const AnalyzeRun& run) {
  std::vector<bench::PlotSeries> series;
  for (size_t i = 0; i < run.search.measured.size(); ++i) {
    const MeasuredPoint& m = run.search.measured[i];
    if (!m.result.loaded || m.result.curve.empty()) continue;
    bench::PlotSeries& s = series.emplace_back();
    s.name = StrCat(i + 1, ": ", m.label, static_cast<int>(i) == run.search.best ? " (best)" : "");
    for (const auto& [throughput, latency_ms] : m.result.curve) s.points.push_back({throughput, latency_ms, ""});
  }
  return bench::FormatSvgPlot(series, StrCat(run.model, ": ", Percentile(run.objective),
                                             " latency vs throughput per configuration (", run.objective.ToString(), ")"),
                              {"throughput", "requests/s", StrCat(Percentile(run.objective), " latency"), "ms"});
}

}  // namespace infera::analyze
