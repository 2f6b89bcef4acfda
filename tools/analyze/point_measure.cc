#include "tools/analyze/point_measure.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "common/str_cat.h"
#include "tools/bench/bench_command.h"
#include "tools/bench/simple_http.h"

namespace infera::analyze {
namespace {

double PercentileMs(const bench::LatencySummary& s, double percentile) {
  if (percentile <= 50) return s.p50_us / 1e3;
  if (percentile <= 90) return s.p90_us / 1e3;
  if (percentile <= 95) return s.p95_us / 1e3;
  return s.p99_us / 1e3;
}

// One load level (a concurrency, or the open loop's rate) across the repeats.
struct LevelSamples {
  int concurrency = 0;
  std::vector<const bench::LevelResult*> levels;  // the repeats that measured it (ok > 0)
  int clean = 0;                                   // of which without errors
};

double Median(std::vector<double> values) { return SpreadOf(std::move(values)).median; }

// The level's figures and verdict, as a PointResult (score not set).
PointResult ReduceLevel(const Objective& objective, const LevelSamples& samples, int repeats) {
  PointResult r;
  r.loaded = true;
  r.repeats = repeats;
  r.concurrency = samples.concurrency;
  std::vector<double> throughput, latency, p50, p99, cpu;
  for (const bench::LevelResult* level : samples.levels) {
    throughput.push_back(level->throughput_rps);
    latency.push_back(PercentileMs(level->latency, objective.percentile));
    p50.push_back(level->latency.p50_us / 1e3);
    p99.push_back(level->latency.p99_us / 1e3);
    if (level->server_cpu_us_per_request) cpu.push_back(*level->server_cpu_us_per_request);
  }
  r.throughput_spread = SpreadOf(throughput);
  r.latency_spread = SpreadOf(latency);
  r.throughput_rps = r.throughput_spread.median;
  r.objective_latency_ms = r.latency_spread.median;
  r.p50_ms = Median(p50);
  r.p99_ms = Median(p99);
  if (!cpu.empty()) r.server_cpu_us_per_request = Median(cpu);
  // The judged values: a repeat that did not measure this level cleanly (errors, or the
  // sweep stopped before it) is on the wrong side of the bound.
  std::vector<double> judged;
  if (objective.kind == Objective::Kind::kMaxThroughput) {
    for (const bench::LevelResult* level : samples.levels) {
      judged.push_back(level->errors == 0 ? PercentileMs(level->latency, objective.percentile)
                                          : std::numeric_limits<double>::infinity());
    }
    judged.resize(static_cast<size_t>(repeats), std::numeric_limits<double>::infinity());
    r.verdict = JudgeAtMost(SpreadOf(judged), objective.latency_limit_ms);
  } else {
    for (const bench::LevelResult* level : samples.levels) {
      judged.push_back(level->errors == 0 ? level->throughput_rps : 0);
    }
    judged.resize(static_cast<size_t>(repeats), 0);
    r.verdict = JudgeAtLeast(SpreadOf(judged), objective.min_rate);
  }
  r.met = r.verdict == Verdict::kMet;
  return r;
}

}  // namespace

absl::Status LoadWithOverride(const MeasureSettings& s, const std::string& override_body) {
  const std::string path = StrCat("/v2/repository/models/", s.model, "/load");
  auto reply = bench::SimpleHttpRequest("POST", s.host, s.port, path, override_body,
                                        {{"Content-Type", "application/json"}}, s.load_timeout_ms);
  if (!reply.ok()) return absl::UnavailableError(StrCat("load: ", reply.status().message()));
  if (reply->status != 200) {
    return absl::FailedPreconditionError(StrCat("load refused (HTTP ", reply->status, "): ", reply->body.substr(0, 500)));
  }
  return absl::OkStatus();
}

PointResult ReduceSweeps(const Objective& objective, const std::vector<bench::RunReport>& reports) {
  std::map<int, LevelSamples> by_level;  // by concurrency (0: the open loop)
  bool any_level = false;
  std::string stop_reason;
  for (const bench::RunReport& report : reports) {
    if (!report.stop_reason.empty()) stop_reason = report.stop_reason;
    for (const bench::LevelResult& level : report.levels) {
      any_level = true;
      if (level.ok == 0) continue;
      LevelSamples& samples = by_level[level.concurrency];
      samples.concurrency = level.concurrency;
      samples.levels.push_back(&level);
      if (level.errors == 0) ++samples.clean;
    }
  }
  const int repeats = static_cast<int>(reports.size());
  std::optional<PointResult> best;      // the best verdict, then the score's figure
  std::optional<PointResult> fallback;  // best effort
  std::vector<std::pair<double, double>> curve;
  for (const auto& [concurrency, samples] : by_level) {
    PointResult level = ReduceLevel(objective, samples, repeats);
    curve.emplace_back(level.throughput_rps, level.objective_latency_ms);
    if (objective.kind == Objective::Kind::kMaxThroughput) {
      if (level.verdict != Verdict::kNotMet &&
          (!best || level.verdict > best->verdict ||
           (level.verdict == best->verdict && level.throughput_rps > best->throughput_rps))) {
        best = level;
      }
      if (!fallback || level.objective_latency_ms < fallback->objective_latency_ms) fallback = level;
    } else {
      if (level.verdict != Verdict::kNotMet) best = level;
      if (!fallback || level.throughput_rps > fallback->throughput_rps) fallback = level;
    }
  }
  if (!fallback) {
    PointResult failed;
    failed.repeats = repeats;
    failed.error = !any_level ? StrCat("nothing measured", stop_reason.empty() ? "" : ": " + stop_reason)
                              : "every request failed";
    return failed;
  }
  PointResult r = best ? *best : *fallback;
  if (objective.kind == Objective::Kind::kMaxThroughput) {
    r.score = best ? r.throughput_rps : r.objective_latency_ms;
  } else {
    r.score = best ? r.objective_latency_ms : r.throughput_rps;
  }
  r.curve = std::move(curve);
  return r;
}

PointResult MeasurePoint(const MeasureSettings& s, const std::string& override_body, const std::atomic<bool>& stop) {
  PointResult failed;
  if (absl::Status loaded = LoadWithOverride(s, override_body); !loaded.ok()) {
    failed.error = std::string(loaded.message());
    return failed;
  }
  bench::BenchOptions o;
  o.model = s.model;
  o.host = s.host;
  o.port = s.port;
  o.url_given = true;
  o.progress = 0;
  o.percentile = s.objective.percentile;
  o.request_timeout_ms = 10000;
  if (s.server_pid > 0) o.server_pid = s.server_pid;
  // Settle: a fifth of the point's time at the sweep's highest concurrency, discarded.
  // Right after a load, a backend may still be compiling for batch shapes it has not
  // seen (TorchScript's profiling executor specialises per shape); without this the
  // first level measured those stalls instead of the configuration.
  {
    bench::BenchOptions settle = o;
    bench::RangeSpec top;
    const std::vector<double> levels = s.concurrency.Levels();
    top.start = top.end = levels.empty() ? 1 : levels.back();
    settle.concurrency_range = top;
    settle.warmup_ms = static_cast<int64_t>(s.time_per_point_s * 1000 / 5);
    settle.measurement_interval_ms = 100;
    settle.duration_s = 0.1;
    settle.max_duration_s = s.time_per_point_s + 30;
    auto settled = bench::RunKServeSweep(settle, stop);
    if (!settled.ok()) {
      failed.error = StrCat("measurement: ", settled.status().message());
      return failed;
    }
  }
  const double total_ms = s.time_per_point_s * 1000;
  double level_ms = total_ms;
  if (s.objective.kind == Objective::Kind::kMaxThroughput) {
    o.concurrency_range = s.concurrency;
    o.latency_threshold_ms = s.objective.latency_limit_ms;
    level_ms = total_ms / static_cast<double>(std::max<size_t>(1, s.concurrency.Levels().size()));
  } else {
    bench::RangeSpec rate;
    rate.start = rate.end = s.objective.min_rate * kRateHeadroom;
    o.request_rate_range = rate;
    o.max_connections = 256;
  }
  o.warmup_ms = static_cast<int64_t>(std::max(100.0, level_ms / 4));
  o.measurement_interval_ms = static_cast<int64_t>(std::max(200.0, level_ms - static_cast<double>(o.warmup_ms)));
  o.duration_s = static_cast<double>(o.measurement_interval_ms) / 1000;  // one window per level
  o.max_duration_s = s.time_per_point_s * 2 + 30;  // a bound; the levels end first
  std::vector<bench::RunReport> reports;
  for (int i = 0; i < std::max(1, s.repeats) && !stop.load(); ++i) {
    auto report = bench::RunKServeSweep(o, stop);
    if (!report.ok()) {
      failed.error = StrCat("measurement: ", report.status().message());
      return failed;
    }
    reports.push_back(*std::move(report));
  }
  return ReduceSweeps(s.objective, reports);
}

}  // namespace infera::analyze
