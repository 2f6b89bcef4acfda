#include "tools/bench/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace infera::bench {
namespace {

constexpr int64_t kLinearLimit = int64_t{1} << LatencyHistogram::kLinearLimitBits;
constexpr int kSubBuckets = 1 << LatencyHistogram::kSubBucketBits;

}  // namespace

// Layout: indices [0, 256) hold the values 0..255 exactly. A value v >= 256 with its
// highest set bit at position b (8 <= b < 40) falls in group g = b - 8, which covers
// [2^b, 2^(b+1)) in 128 buckets of width 2^(b-7):
//   index = 256 + g * 128 + ((v >> (b - 7)) - 128)
int LatencyHistogram::NumBuckets() {
  return static_cast<int>(kLinearLimit) + (kMaxBits - kLinearLimitBits) * kSubBuckets;
}

int LatencyHistogram::BucketIndex(int64_t value_ns) {
  const int64_t v = std::clamp<int64_t>(value_ns, 0, kMaxTrackableNs);
  if (v < kLinearLimit) return static_cast<int>(v);
  const int b = 63 - std::countl_zero(static_cast<uint64_t>(v));
  const int group = b - kLinearLimitBits;
  const int64_t sub = (v >> (b - kSubBucketBits)) - kSubBuckets;
  return static_cast<int>(kLinearLimit + group * kSubBuckets + sub);
}

int64_t LatencyHistogram::BucketLower(int index) {
  if (index < kLinearLimit) return index;
  const int rel = index - static_cast<int>(kLinearLimit);
  const int b = rel / kSubBuckets + kLinearLimitBits;
  const int64_t sub = rel % kSubBuckets + kSubBuckets;
  return sub << (b - kSubBucketBits);
}

int64_t LatencyHistogram::BucketUpper(int index) {
  if (index < kLinearLimit) return index;
  const int rel = index - static_cast<int>(kLinearLimit);
  const int b = rel / kSubBuckets + kLinearLimitBits;
  return BucketLower(index) + (int64_t{1} << (b - kSubBucketBits)) - 1;
}

LatencyHistogram::LatencyHistogram() : counts_(NumBuckets(), 0) {}

void LatencyHistogram::RecordN(int64_t value_ns, int64_t count) {
  if (count <= 0) return;
  value_ns = std::clamp<int64_t>(value_ns, 0, kMaxTrackableNs);
  counts_[BucketIndex(value_ns)] += count;
  if (count_ == 0 || value_ns < min_) min_ = value_ns;
  if (count_ == 0 || value_ns > max_) max_ = value_ns;
  count_ += count;
  sum_ += value_ns * count;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  if (count_ == 0 || other.min_ < min_) min_ = other.min_;
  if (count_ == 0 || other.max_ > max_) max_ = other.max_;
  count_ += other.count_;
  sum_ += other.sum_;
}

void LatencyHistogram::Clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = sum_ = min_ = max_ = 0;
}

int64_t LatencyHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  if (p <= 0) return min_;
  if (p >= 100) return max_;
  // Nearest rank: the ceil(p/100 * N)-th smallest sample (1-based).
  const int64_t rank = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(p / 100.0 * static_cast<double>(count_) - 1e-9)));
  int64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const int index = static_cast<int>(i);
      const int64_t mid = BucketLower(index) + (BucketUpper(index) - BucketLower(index)) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

}  // namespace infera::bench
