#include "tools/analyze/point_measure.h"

#include <algorithm>
#include <cmath>

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

void FillFromLevel(const Objective& objective, const bench::LevelResult& level, PointResult* r) {
  r->throughput_rps = level.throughput_rps;
  r->p50_ms = level.latency.p50_us / 1e3;
  r->p99_ms = level.latency.p99_us / 1e3;
  r->objective_latency_ms = PercentileMs(level.latency, objective.percentile);
  r->concurrency = level.concurrency;
  r->server_cpu_us_per_request = level.server_cpu_us_per_request;
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

PointResult ReduceSweep(const Objective& objective, const bench::RunReport& report) {
  PointResult r;
  r.loaded = true;
  const bench::LevelResult* best = nullptr;      // the score's level
  const bench::LevelResult* fallback = nullptr;  // best effort: lowest latency
  for (const bench::LevelResult& level : report.levels) {
    if (level.ok == 0) continue;
    const double latency = PercentileMs(level.latency, objective.percentile);
    r.curve.emplace_back(level.throughput_rps, latency);
    if (objective.kind == Objective::Kind::kMaxThroughput) {
      if (latency <= objective.latency_limit_ms && level.errors == 0 &&
          (!best || level.throughput_rps > best->throughput_rps)) {
        best = &level;
      }
      if (!fallback || latency < PercentileMs(fallback->latency, objective.percentile)) fallback = &level;
    } else {
      const bool rate_met = level.throughput_rps >= 0.95 * objective.min_rate && level.errors == 0;
      if (rate_met && (!best || latency < PercentileMs(best->latency, objective.percentile))) best = &level;
      if (!fallback || level.throughput_rps > fallback->throughput_rps) fallback = &level;
    }
  }
  if (!fallback) {
    r.loaded = false;
    r.error = report.levels.empty() ? StrCat("nothing measured", report.stop_reason.empty() ? "" : ": " + report.stop_reason)
                                    : "every request failed";
    return r;
  }
  r.met = best != nullptr;
  const bench::LevelResult& level = best ? *best : *fallback;
  FillFromLevel(objective, level, &r);
  if (objective.kind == Objective::Kind::kMaxThroughput) {
    r.score = r.met ? level.throughput_rps : r.objective_latency_ms;
  } else {
    r.score = r.met ? r.objective_latency_ms : level.throughput_rps;
  }
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
  const double total_ms = s.time_per_point_s * 1000 * 4 / 5;
  double level_ms = total_ms;
  if (s.objective.kind == Objective::Kind::kMaxThroughput) {
    o.concurrency_range = s.concurrency;
    o.latency_threshold_ms = s.objective.latency_limit_ms;
    level_ms = total_ms / static_cast<double>(std::max<size_t>(1, s.concurrency.Levels().size()));
  } else {
    bench::RangeSpec rate;
    rate.start = rate.end = s.objective.min_rate;
    o.request_rate_range = rate;
    o.max_connections = 256;
  }
  o.warmup_ms = static_cast<int64_t>(std::max(100.0, level_ms / 4));
  o.measurement_interval_ms = static_cast<int64_t>(std::max(200.0, level_ms - static_cast<double>(o.warmup_ms)));
  o.duration_s = static_cast<double>(o.measurement_interval_ms) / 1000;  // one window per level
  o.max_duration_s = s.time_per_point_s * 2 + 30;  // a bound; the levels end first
  auto report = bench::RunKServeSweep(o, stop);
  if (!report.ok()) {
    failed.error = StrCat("measurement: ", report.status().message());
    return failed;
  }
  return ReduceSweep(s.objective, *report);
}

}  // namespace infera::analyze
