// Objective: what `infera analyze` optimises, and how two measured points compare.
//
//   max-throughput:p99<=20ms   the highest throughput whose P99 latency is <= 20 ms
//                              ("ms" optional; p50, p90, p95 or p99)
//   min-latency:rate>=200      the lowest P99 latency while serving >= 200 req/s
//                              ("req/s" optional)
//
// Every point is measured several times (--repeats) and a bound is judged on the
// spread of those measurements, not on one sample (the noise rule, JudgeAtMost /
// JudgeAtLeast):
//
//   met           every measurement is within the bound (the whole spread is on the
//                 right side: for rate>=200 the lowest achieved rate is >= 200)
//   within noise  the median is within the bound but at least one measurement is not
//                 (the bound lies inside the spread: the point may or may not meet it)
//   not met       the median is outside the bound (199.9 req/s does not meet rate>=200)
//
// A PointResult's `score` means the objective's figure when the verdict is met or within
// noise (throughput in req/s, or the latency percentile in ms), and the best-effort
// figure otherwise (the lowest latency measured for max-throughput, the achieved
// throughput for min-latency), so that unmet points still rank by how close they came.
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

enum class Verdict { kNotMet, kWithinNoise, kMet };

// "met", "within noise", "not met".
const char* VerdictName(Verdict verdict);

// A figure measured `n` times: its median and range.
struct Spread {
  double min = 0, median = 0, max = 0;
  int n = 0;
  // (max - min) / median in percent; 0 when n < 2 or the median is 0.
  double RelativePct() const;
};

// The spread of `values` (empty: n = 0).
Spread SpreadOf(std::vector<double> values);

// A spread above this (relative, %) is reported with a warning: the ranking of such a
// point against its neighbours is uncertain.
inline constexpr double kLargeSpreadPct = 10;

// The open loop of a min-latency objective is offered this multiple of its rate: a
// configuration that keeps up then measures clearly above the bound (offered exactly
// the bound, a keeping-up server measures around it, half the time just below).
inline constexpr double kRateHeadroom = 1.05;

// The noise rule for a lower bound (rate >= bound) and an upper bound (latency <= bound).
Verdict JudgeAtLeast(const Spread& measured, double bound);
Verdict JudgeAtMost(const Spread& measured, double bound);

// What one configuration measured, reduced to the objective.
struct PointResult {
  bool loaded = false;   // false: the load was refused or nothing measured; `error` says why
  std::string error;     // load or measurement failure
  Verdict verdict = Verdict::kNotMet;
  bool met = false;      // verdict == kMet
  double score = 0;      // see the header comment
  int repeats = 0;       // measurements behind the figures below
  // At the level the score came from: medians over the repeats...
  double throughput_rps = 0;
  double p50_ms = 0, p99_ms = 0, objective_latency_ms = 0;
  int concurrency = 0;   // closed loop; 0 for min-latency (open loop)
  std::optional<double> server_cpu_us_per_request;
  // ... and their spreads (throughput, and the objective's latency percentile).
  Spread throughput_spread, latency_spread;
  // The relative spread (%) of the figure points are ranked by when the bound holds:
  // throughput for max-throughput, the latency percentile for min-latency. (The other
  // figure's range is reported too; a sub-millisecond P99 far below its bound can vary
  // by several times without changing anything.)
  double SpreadPct(const Objective& objective) const;
  // Every measured level, for the plot: (throughput req/s, objective latency ms).
  std::vector<std::pair<double, double>> curve;
};

// True when `a` is strictly better than `b` under `objective`: loaded beats not, met
// beats within noise beats not met, then the score (higher throughput / lower latency).
bool Better(const Objective& objective, const PointResult& a, const PointResult& b);

// Relative improvement of `a` over `b` in percent (>= 0 when Better, <= 0 otherwise;
// +infinity when `a` has the better verdict or loads and `b` does not).
double GainPercent(const Objective& objective, const PointResult& a, const PointResult& b);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_OBJECTIVE_H_
