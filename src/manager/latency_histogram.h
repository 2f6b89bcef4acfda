// LatencyHistogram: a lock-free histogram of request latencies with fixed log-scale
// buckets (50 µs to ~100 s, 10 % apart), for quantiles over windows.
//
// Record() is one relaxed atomic increment. Snapshots are cumulative; the difference
// of two snapshots is the histogram of what happened in between, so a sliding window is
// "snapshot now minus snapshot W seconds ago".
//
// Thread-safe.
#ifndef INFERA_MANAGER_LATENCY_HISTOGRAM_H_
#define INFERA_MANAGER_LATENCY_HISTOGRAM_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace infera {

class LatencyHistogram {
 public:
  static constexpr int kBuckets = 160;

  void Record(uint64_t nanos) {
    counts_[BucketOf(nanos)].fetch_add(1, std::memory_order_relaxed);
  }
  std::vector<uint64_t> Snapshot() const;

  // The q-quantile (0..1) in seconds of a (difference of) snapshot: the upper bound of
  // the bucket holding it. 0 for an empty histogram.
  static double Quantile(const std::vector<uint64_t>& counts, double q);
  // a - b, element-wise (b taken as 0 where missing).
  static std::vector<uint64_t> Subtract(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

  static int BucketOf(uint64_t nanos);
  static double UpperBoundSeconds(int bucket);

 private:
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
};

}  // namespace infera

#endif  // INFERA_MANAGER_LATENCY_HISTOGRAM_H_
