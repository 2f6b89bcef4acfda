// Objective: what `infera analyze` optimises, and how two measured points compare.
//
//   max-throughput:p99<=20ms   the highest throughput whose P99 latency is <= 20 ms
//                              ("ms" optional; p50, p90, p95 or p99)
//   min-latency:rate>=200      the lowest P99 latency while serving >= 200 req/s
//                              ("req/s" optional)
//
// A PointResult's `score` means the objective's figure when `met` (throughput in req/s,
// or the latency percentile in ms), and the best-effort figure otherwise (the lowest
// latency measured for max-throughput, the achieved throughput for min-latency), so that
// unmet points still rank by how close they came.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_ANALYZE_OBJECTIVE_H_
#define INFERA_TOOLS_ANALYZE_OBJECTIVE_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::analyze {

struct Objective {
  enum class Kind { kMaxThroughput, kMinLatency };
  Kind kind = Kind::kMaxThroughput;
  double percentile = 99;       // 50 | 90 | 95 | 99
  double latency_limit_ms = 0;  // kMaxThroughput
  double min_rate = 0;          // kMinLatency, requests/s

  // Canonical text, e.g. "max-throughput:p99<=20ms".
  std::string ToString() const;
};

// InvalidArgument naming the problem (unknown goal, unknown metric, a number that is
// not finite and > 0, trailing text).
absl::StatusOr<Objective> ParseObjective(std::string_view text);

// What one configuration measured, reduced to the objective.
struct PointResult {
  bool loaded = false;   // false: the load was refused or nothing measured; `error` says why
  std::string error;     // load or measurement failure
  bool met = false;
  double score = 0;      // see the header comment
  // At the level the score came from.
  double throughput_rps = 0;
  double p50_ms = 0, p99_ms = 0, objective_latency_ms = 0;
  int concurrency = 0;   // closed loop; 0 for min-latency (open loop)
  std::optional<double> server_cpu_us_per_request;
  // Every measured level, for the plot: (throughput req/s, objective latency ms).
  std::vector<std::pair<double, double>> curve;
};

// True when `a` is strictly better than `b` under `objective`: loaded beats not, met
// beats unmet, then the score (higher throughput / lower latency).
bool Better(const Objective& objective, const PointResult& a, const PointResult& b);

// Relative improvement of `a` over `b` in percent (>= 0 when Better, <= 0 otherwise;
// +infinity when `a` meets the objective or loads and `b` does not).
double GainPercent(const Objective& objective, const PointResult& a, const PointResult& b);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_OBJECTIVE_H_
