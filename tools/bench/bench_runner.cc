#include "tools/bench/bench_runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "common/str_cat.h"
#include "tools/bench/measurement_window.h"
#include "tools/bench/process_cpu.h"
#include "tools/bench/stability.h"

namespace infera::bench {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

// What is read at each window boundary.
struct Boundary {
  SteadyTime time;
  double self_cpu_s = 0;
  double machine_busy_s = 0;
  std::optional<double> server_cpu_s;
  std::optional<ServerStats> stats;
};

std::string Fixed(double v, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, v);
  return buffer;
}

class LevelRun {
 public:
  LevelRun(const BenchOptions& options, const std::vector<std::unique_ptr<LoadShard>>& shards,
           const RunnerHooks& hooks, const std::atomic<bool>& stop, ProgressLine& progress,
           SteadyTime deadline)
      : options_(options), shards_(shards), hooks_(hooks), stop_(stop), progress_(progress),
        deadline_(deadline) {}

  // Measures one level; `*cut_short` is set when the deadline or a stop ended it.
  LevelResult Run(double value, DriverTotals* totals, bool* cut_short);

 private:
  Boundary Mark() const {
    Boundary b;
    b.time = std::chrono::steady_clock::now();
    b.self_cpu_s = SelfCpuSeconds();
    b.machine_busy_s = MachineBusySeconds();
    if (options_.server_pid) b.server_cpu_s = ProcessTreeCpuSeconds(*options_.server_pid);
    if (hooks_.fetch_stats) b.stats = hooks_.fetch_stats();
    return b;
  }

  WindowStats TakeAll() const {
    WindowStats merged;
    for (const auto& shard : shards_) merged.Merge(shard->TakeWindow());
    return merged;
  }

  double Metric(const WindowStats& w) const {
    return options_.percentile ? static_cast<double>(w.latency.Percentile(*options_.percentile))
                               : w.latency.Mean();
  }

  // Sleeps until `until`, refreshing the progress line; false if stopped or past the
  // run's deadline first.
  bool SleepUntil(SteadyTime until, const std::string& status) const {
    while (true) {
      const auto now = std::chrono::steady_clock::now();
      if (stop_.load() || now >= deadline_) return false;
      if (now >= until) return true;
      int64_t in_flight = 0;
      if (progress_.enabled()) {
        for (const auto& shard : shards_) in_flight += shard->InFlight();
        progress_.Update(StrCat(status, "  in flight ", in_flight));
      }
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          until - now, std::chrono::milliseconds(200)));
    }
  }

  // Sleeps until the window that began at `start` is over (measurement_window.h); false
  // if stopped or past the run's deadline first.
  bool WaitForWindowEnd(SteadyTime start, const std::string& status) const {
    const WindowRule rule = MeasurementWindowRule(options_);
    if (!SleepUntil(start + std::chrono::milliseconds(rule.min_ms), status)) return false;
    while (true) {
      const auto now = std::chrono::steady_clock::now();
      const int64_t elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count();
      int64_t completed = 0;
      if (rule.mode == MeasurementMode::kCountWindows) {
        for (const auto& shard : shards_) completed += shard->CompletedInWindow();
      }
      if (WindowComplete(rule, elapsed_ms, completed)) return true;
      if (!SleepUntil(now + std::chrono::milliseconds(20), status)) return false;
    }
  }

  // -v: one line per window on stderr.
  void PrintWindow(const std::string& name, size_t index, const WindowStats& w) const {
    std::fprintf(stderr, "%s: window %zu: %.3f s, %lld ok + %lld errors, %.1f req/s, p50 %.3f ms, p99 %.3f ms\n",
                 name.c_str(), index, w.duration_s(), static_cast<long long>(w.ok),
                 static_cast<long long>(w.errors), w.Throughput(),
                 static_cast<double>(w.latency.Percentile(50)) / 1e6,
                 static_cast<double>(w.latency.Percentile(99)) / 1e6);
  }

  LevelResult Summarize(double value, const std::vector<WindowStats>& windows, size_t first,
                        const Boundary& begin, const Boundary& end, bool stable) const;

  const BenchOptions& options_;
  const std::vector<std::unique_ptr<LoadShard>>& shards_;
  const RunnerHooks& hooks_;
  const std::atomic<bool>& stop_;
  ProgressLine& progress_;
  const SteadyTime deadline_;
};

LevelResult LevelRun::Run(double value, DriverTotals* totals, bool* cut_short) {
  const bool closed = options_.request_rate_range == std::nullopt;
  const std::string name = closed ? StrCat("c=", static_cast<int>(value)) : StrCat(value, " req/s");
  const std::vector<LoadSpec> specs = SplitLevel(options_, value, shards_.size());
  for (size_t i = 0; i < shards_.size(); ++i) shards_[i]->StartLevel(specs[i]);

  bool ok = SleepUntil(std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.warmup_ms),
                       StrCat(name, ": warming up"));
  TakeAll();  // discard the warm-up
  std::vector<Boundary> marks = {Mark()};
  std::vector<WindowStats> windows;
  StabilityTracker stability(3, options_.stability_percentage);
  const int max_windows =
      options_.duration_s
          ? std::max(1, static_cast<int>(std::ceil(*options_.duration_s * 1000 / options_.measurement_interval_ms)))
          : options_.max_trials;
  bool stable = false;
  while (ok && static_cast<int>(windows.size()) < max_windows && !stable) {
    const std::string status = StrCat(name, ": window ", windows.size() + 1, "/", max_windows,
                                      windows.empty() ? std::string() :
                                      StrCat("  ", Fixed(windows.back().Throughput(), 1), " req/s  p99 ",
                                             Fixed(windows.back().latency.Percentile(99) / 1e6, 3), " ms"));
    ok = WaitForWindowEnd(marks.back().time, status);
    if (!ok && windows.size() > 0) break;  // keep what was measured
    windows.push_back(TakeAll());
    marks.push_back(Mark());
    if (options_.verbose) PrintWindow(name, windows.size(), windows.back());
    stability.Add(windows.back().Throughput(), Metric(windows.back()));
    stable = !options_.duration_s && stability.Stable();
  }
  *cut_short = !ok;
  progress_.Update(StrCat(name, ": draining"));
  const auto drain = std::chrono::milliseconds(options_.request_timeout_ms + 1000);
  for (const auto& shard : shards_) {
    const DriverTotals t = shard->StopLevel(drain);
    totals->sent += t.sent;
    totals->ok += t.ok;
    totals->errors += t.errors;
    totals->dropped += t.dropped;
  }
  progress_.Clear();
  const size_t use = options_.duration_s ? windows.size() : std::min<size_t>(3, windows.size());
  const size_t first = windows.size() - use;
  return Summarize(value, windows, first, marks[first], marks.back(), stable);
}

LevelResult LevelRun::Summarize(double value, const std::vector<WindowStats>& windows, size_t first,
                                const Boundary& begin, const Boundary& end, bool stable) const {
  LevelResult l;
  if (options_.request_rate_range) {
    l.request_rate = value;
    l.distribution = std::string(ArrivalDistributionName(options_.distribution));
  } else {
    l.concurrency = static_cast<int>(value);
  }
  WindowStats merged;
  for (size_t i = first; i < windows.size(); ++i) merged.Merge(windows[i]);
  l.stable = stable;
  l.windows = static_cast<int>(windows.size() - first);
  l.duration_s = merged.duration_s();
  l.sent = merged.sent;
  l.ok = merged.ok;
  l.errors = merged.errors;
  l.dropped = merged.dropped;
  l.throughput_rps = merged.Throughput();
  l.inferences_per_s = l.throughput_rps * static_cast<double>(options_.batch_size);
  l.send_rate = l.duration_s > 0 ? static_cast<double>(merged.sent) / l.duration_s : 0;
  l.latency = LatencySummary::From(merged.latency);
  l.metric_latency_us = Metric(merged) / 1e3;
  l.send_lag = LatencySummary::From(merged.send_lag);
  l.ttft = LatencySummary::From(merged.ttft);
  l.tpot = LatencySummary::From(merged.tpot);
  l.output_tokens = merged.output_tokens;
  l.output_tokens_per_s = l.duration_s > 0 ? static_cast<double>(merged.output_tokens) / l.duration_s : 0;
  l.error_counts = merged.error_counts;
  const double wall = std::chrono::duration<double>(end.time - begin.time).count();
  if (wall > 0) {
    l.client_cpu_pct = 100 * (end.self_cpu_s - begin.self_cpu_s) / wall;
    if (merged.ok + merged.errors > 0) {
      // Requests completed over exactly the CPU-measured span.
      const double requests = static_cast<double>(merged.ok + merged.errors) * wall / std::max(l.duration_s, 1e-9);
      l.client_cpu_us_per_request = (end.self_cpu_s - begin.self_cpu_s) * 1e6 / requests;
    }
    double foreign = (end.machine_busy_s - begin.machine_busy_s) - (end.self_cpu_s - begin.self_cpu_s);
    if (begin.server_cpu_s && end.server_cpu_s) foreign -= *end.server_cpu_s - *begin.server_cpu_s;
    l.foreign_cpu_pct = std::max(0.0, 100 * foreign / (wall * std::thread::hardware_concurrency()));
    if (begin.server_cpu_s && end.server_cpu_s) {
      const double cpu = *end.server_cpu_s - *begin.server_cpu_s;
      l.server_cpu_pct = 100 * cpu / wall;
      if (merged.ok + merged.errors > 0) {
        // Requests completed over exactly the CPU-measured span.
        const double requests = static_cast<double>(merged.ok + merged.errors) * wall / std::max(l.duration_s, 1e-9);
        l.server_cpu_us_per_request = cpu * 1e6 / requests;
      }
    }
  }
  if (begin.stats && end.stats) l.server = ComputeBreakdown(end.stats->Minus(*begin.stats));
  return l;
}

}  // namespace

LatencySummary LatencySummary::From(const LatencyHistogram& h) {
  LatencySummary s;
  s.count = h.count();
  if (s.count == 0) return s;
  s.mean_us = h.Mean() / 1e3;
  s.min_us = static_cast<double>(h.min()) / 1e3;
  s.p50_us = static_cast<double>(h.Percentile(50)) / 1e3;
  s.p90_us = static_cast<double>(h.Percentile(90)) / 1e3;
  s.p95_us = static_cast<double>(h.Percentile(95)) / 1e3;
  s.p99_us = static_cast<double>(h.Percentile(99)) / 1e3;
  s.max_us = static_cast<double>(h.max()) / 1e3;
  return s;
}

std::vector<LoadSpec> SplitLevel(const BenchOptions& options, double value, size_t num_shards) {
  std::vector<LoadSpec> specs(num_shards);
  const int concurrency = static_cast<int>(value);
  for (size_t i = 0; i < num_shards; ++i) {
    LoadSpec& spec = specs[i];
    spec.seed = options.input.seed * 7919 + i;
    spec.first_payload = i * 7;  // shards start at different payloads
    if (options.request_rate_range) {
      spec.mode = LoadSpec::Mode::kRequestRate;
      spec.request_rate = value / static_cast<double>(num_shards);
      spec.distribution = options.distribution;
      // --request-intervals: each of n shards sends every arrival of the list, n times
      // further apart, so together they keep the list's rate.
      for (int64_t gap : options.request_gaps_ns) spec.gaps_ns.push_back(gap * static_cast<int64_t>(num_shards));
    } else {
      spec.mode = LoadSpec::Mode::kConcurrency;
      spec.concurrency = concurrency / static_cast<int>(num_shards) +
                         (static_cast<int>(i) < concurrency % static_cast<int>(num_shards) ? 1 : 0);
    }
  }
  return specs;
}

void RunSweep(const BenchOptions& options, const std::vector<std::unique_ptr<LoadShard>>& shards,
              const RunnerHooks& hooks, const std::atomic<bool>& stop, ProgressLine& progress,
              RunReport* report) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(options.max_duration_s * 1000));
  const RangeSpec range = options.request_rate_range ? *options.request_rate_range
                                                     : options.concurrency_range.value_or(RangeSpec{});
  std::optional<ServerStats> stats_before = hooks.fetch_stats ? hooks.fetch_stats() : std::nullopt;
  LevelRun runner(options, shards, hooks, stop, progress, deadline);
  DriverTotals totals;
  for (double value : range.Levels()) {
    if (stop.load()) {
      report->stop_reason = "interrupted";
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      report->stop_reason = StrCat("--max-duration ", options.max_duration_s, " s reached");
      break;
    }
    bool cut_short = false;
    LevelResult level = runner.Run(value, &totals, &cut_short);
    if (level.windows > 0) {
      report->levels.push_back(level);
      if (hooks.on_level) hooks.on_level(level);
    }
    if (cut_short) {
      report->stop_reason = stop.load() ? "interrupted"
                                        : StrCat("--max-duration ", options.max_duration_s, " s reached");
      break;
    }
    const double metric_ms = level.metric_latency_us / 1e3;
    if (options.latency_threshold_ms && level.latency.count > 0 &&
        metric_ms > *options.latency_threshold_ms) {
      report->stop_reason = StrCat(report->latency_metric, " latency ", Fixed(metric_ms, 3),
                                   " ms exceeded --latency-threshold ", *options.latency_threshold_ms, " ms");
      break;
    }
  }
  report->total_sent = totals.sent;
  report->total_ok = totals.ok;
  report->total_errors = totals.errors;
  report->total_dropped = totals.dropped;
  if (stats_before) {
    if (std::optional<ServerStats> after = hooks.fetch_stats()) {
      const ServerStats d = after->Minus(*stats_before);
      report->server_requests = d.success.count + d.fail.count;
    }
  }
}

}  // namespace infera::bench
