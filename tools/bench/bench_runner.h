// BenchRunner: the run controller of `infera bench` — walks the sweep's levels and,
// for each, starts the load on every shard, warms up, takes measurement windows until
// stable (perf_analyzer's rule, stability.h) or for a fixed duration, reads the
// server's statistics and CPU use at each window boundary, summarises the level
// (LevelResult) and drains the shards before the next level.
//
// Bounded: the run stops at --max-duration (checked at every window), on
// --latency-threshold, or when interrupted (the `stop` flag, set by SIGINT); what was
// measured so far is still reported (RunReport::stop_reason says why).
//
// Level result: the merge of the last 3 windows when stable (or at max trials, then
// stable = false), or of all windows with --duration. Server figures are the
// difference of the statistics snapshots taken at those windows' boundaries.
//
// Not thread-safe; runs on the calling thread and drives the shards' threads.
#ifndef INFERA_TOOLS_BENCH_BENCH_RUNNER_H_
#define INFERA_TOOLS_BENCH_BENCH_RUNNER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tools/bench/bench_options.h"
#include "tools/bench/load_shard.h"
#include "tools/bench/progress_line.h"
#include "tools/bench/run_report.h"
#include "tools/bench/server_stats.h"

namespace infera::bench {

struct RunnerHooks {
  // A statistics snapshot of the model; nullopt when unavailable.
  std::function<std::optional<ServerStats>()> fetch_stats;
  // Called as each level finishes (to print its line).
  std::function<void(const LevelResult&)> on_level;
};

// The load of each shard for one level `value` (a concurrency or a request rate).
std::vector<LoadSpec> SplitLevel(const BenchOptions& options, double value, size_t num_shards);

// Runs the sweep; fills report->levels, the totals and stop_reason.
void RunSweep(const BenchOptions& options, const std::vector<std::unique_ptr<LoadShard>>& shards,
              const RunnerHooks& hooks, const std::atomic<bool>& stop, ProgressLine& progress,
              RunReport* report);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_BENCH_RUNNER_H_
