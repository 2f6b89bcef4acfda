// ArrivalSchedule: when the requests of an open-loop (request-rate) run are due.
//
// Constant: arrival k is due at k / rate seconds. Poisson: the gaps are independent
// exponential draws with mean 1 / rate (a Poisson process, vLLM bench serve's
// default), from a seeded generator, so a run is reproducible. Intervals
// (perf_analyzer's --request-intervals): the gaps are given, in order, and start over
// at the end of the list; arrival 0 is due at offset 0. Offsets are computed
// from the start (not by adding rounded gaps), so a long constant run does not drift.
//
// Not thread-safe; owned by one driver.
//
// Usage:
//   ArrivalSchedule schedule(500.0, ArrivalDistribution::kPoisson, /*seed=*/1);
//   int64_t due = start_ns + schedule.Next();   // first arrival: offset 0 (constant)
#ifndef INFERA_TOOLS_BENCH_ARRIVAL_SCHEDULE_H_
#define INFERA_TOOLS_BENCH_ARRIVAL_SCHEDULE_H_

#include <cstdint>
#include <random>
#include <string_view>
#include <optional>
#include <vector>

namespace infera::bench {

enum class ArrivalDistribution { kConstant, kPoisson, kIntervals };

std::string_view ArrivalDistributionName(ArrivalDistribution distribution);
std::optional<ArrivalDistribution> ParseArrivalDistribution(std::string_view name);

class ArrivalSchedule {
 public:
  // REQUIRES: rate_per_s > 0.
  ArrivalSchedule(double rate_per_s, ArrivalDistribution distribution, uint64_t seed);
  // kIntervals: the gaps in ns. REQUIRES: non-empty, each >= 0, their sum > 0.
  explicit ArrivalSchedule(std::vector<int64_t> gaps_ns);

  // Offset in ns from the start of the run of the next arrival; non-decreasing.
  int64_t Next();

  double rate_per_s() const { return rate_per_s_; }

 private:
  double rate_per_s_;
  ArrivalDistribution distribution_;
  std::mt19937_64 rng_;
  std::exponential_distribution<double> exponential_;
  int64_t index_ = 0;          // constant: arrivals handed out so far
  double poisson_offset_s_ = 0;  // Poisson: the running sum of gaps
  std::vector<int64_t> gaps_ns_;  // intervals
  int64_t intervals_offset_ns_ = 0;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_ARRIVAL_SCHEDULE_H_
