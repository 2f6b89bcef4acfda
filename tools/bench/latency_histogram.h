// LatencyHistogram: a log-linear histogram of non-negative durations (nanoseconds) with
// bounded relative error, in the spirit of HdrHistogram.
//
// Values below 256 ns are counted exactly; above, each power of two is split into 128
// equal buckets, so a reported value is within 0.4 % of the true one (bucket midpoint).
// Values above kMaxTrackableNs (~18 min) are clamped. Min, max, count and sum are exact.
// Memory is fixed (~36 KB) whatever the number of samples, and histograms merge by
// adding counts — how per-window results are combined.
//
// Percentile(p) uses the nearest-rank definition: the smallest recorded value v such
// that at least p % of the samples are <= v (the same definition as HdrHistogram and
// perf_analyzer's sorted-vector lookup), reported as its bucket's midpoint, clamped to
// [min, max]. Percentile(100) is the exact max, Percentile(0) the exact min.
//
// Not thread-safe; each driver thread owns its histograms.
//
// Usage:
//   LatencyHistogram h;
//   h.Record(1'250'000);              // 1.25 ms
//   double p99_ms = h.Percentile(99) / 1e6;
#ifndef INFERA_TOOLS_BENCH_LATENCY_HISTOGRAM_H_
#define INFERA_TOOLS_BENCH_LATENCY_HISTOGRAM_H_

#include <cstdint>
#include <vector>

namespace infera::bench {

class LatencyHistogram {
 public:
  static constexpr int kLinearLimitBits = 8;  // values < 2^8 are exact
  static constexpr int kSubBucketBits = 7;    // 128 buckets per power of two above
  static constexpr int kMaxBits = 40;         // 2^40 ns ~ 18 min
  static constexpr int64_t kMaxTrackableNs = (int64_t{1} << kMaxBits) - 1;

  LatencyHistogram();

  void Record(int64_t value_ns) { RecordN(value_ns, 1); }
  void RecordN(int64_t value_ns, int64_t count);
  void Merge(const LatencyHistogram& other);
  void Clear();

  int64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  double Mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0; }
  // Nearest-rank percentile, p in [0, 100]; 0 when empty.
  int64_t Percentile(double p) const;

  // Bucket index of a value and the [lower, upper] range of values a bucket holds
  // (exposed for tests).
  static int BucketIndex(int64_t value_ns);
  static int64_t BucketLower(int index);
  static int64_t BucketUpper(int index);
  static int NumBuckets();

 private:
  std::vector<int64_t> counts_;
  int64_t count_ = 0;
  int64_t sum_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_LATENCY_HISTOGRAM_H_
