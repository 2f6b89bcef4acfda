// StabilityTracker: perf_analyzer's "measure until stable" rule.
//
// A measurement is stable when the last `windows` windows (default 3) all have a
// throughput within `percent` % (default 10) of their mean, and likewise for latency
// (the mean, or the percentile selected with --percentile). A window without a single
// successful request is never stable.
//
// Not thread-safe; owned by the run controller.
//
// Usage:
//   StabilityTracker stability(3, 10.0);
//   for (each window) { stability.Add(throughput, latency_ns); if (stability.Stable()) break; }
#ifndef INFERA_TOOLS_BENCH_STABILITY_H_
#define INFERA_TOOLS_BENCH_STABILITY_H_

#include <deque>

namespace infera::bench {

class StabilityTracker {
 public:
  StabilityTracker(int windows, double percent);

  void Add(double throughput, double latency);
  bool Stable() const;
  void Reset() { samples_.clear(); }

 private:
  struct Sample {
    double throughput;
    double latency;
  };
  int windows_;
  double percent_;
  std::deque<Sample> samples_;  // the last `windows_` windows
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_STABILITY_H_
