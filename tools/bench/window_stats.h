// WindowStats: everything measured over one measurement window, mergeable — the
// per-window record the run controller combines into a level's result.
//
// Conventions (perf_analyzer's):
//   - A request belongs to the window in which it *completes*.
//   - `latency` holds successful requests only; errors are counted by kind.
//   - Closed loop: latency runs from the request's send to its completion.
//     Open loop: from its *scheduled* arrival to its completion, so time spent waiting
//     for a free connection is included (no coordinated omission); `send_lag` holds how
//     late each request went out versus its schedule — the rate-accuracy measure.
//   - `ttft` / `tpot` are filled only by streaming APIs (RequestResult tokens).
//
// Not thread-safe; a driver fills one, the controller merges copies.
#ifndef INFERA_TOOLS_BENCH_WINDOW_STATS_H_
#define INFERA_TOOLS_BENCH_WINDOW_STATS_H_

#include <cstdint>
#include <map>
#include <string>

#include "tools/bench/latency_histogram.h"

namespace infera::bench {

struct ErrorCount {
  int64_t count = 0;
  std::string example;  // the first detail seen
};

struct WindowStats {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t sent = 0;       // requests handed to the client in this window
  int64_t ok = 0;         // successful completions
  int64_t errors = 0;     // failed completions (sum of error_counts)
  int64_t dropped = 0;    // open loop: due but never sent (the level ended first)
  int64_t output_tokens = 0;
  std::map<std::string, ErrorCount> error_counts;  // by RequestResult::error_kind
  LatencyHistogram latency;
  LatencyHistogram send_lag;
  LatencyHistogram ttft;
  LatencyHistogram tpot;

  double duration_s() const { return static_cast<double>(end_ns - start_ns) / 1e9; }
  // Successful requests per second over the window.
  double Throughput() const;
  // Adds `other`'s counts; the span becomes [min start, max end].
  void Merge(const WindowStats& other);
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_WINDOW_STATS_H_
