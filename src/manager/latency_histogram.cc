#include "manager/latency_histogram.h"

#include <cmath>

namespace infera {
namespace {
constexpr double kFirstBoundSeconds = 50e-6;
constexpr double kGrowth = 1.1;
}  // namespace

int LatencyHistogram::BucketOf(uint64_t nanos) {
  const double seconds = static_cast<double>(nanos) * 1e-9;
  if (seconds <= kFirstBoundSeconds) return 0;
  const int bucket = static_cast<int>(std::ceil(std::log(seconds / kFirstBoundSeconds) / std::log(kGrowth)));
  return bucket < kBuckets ? bucket : kBuckets - 1;
}

double LatencyHistogram::UpperBoundSeconds(int bucket) {
  return kFirstBoundSeconds * std::pow(kGrowth, bucket);
}

std::vector<uint64_t> LatencyHistogram::Snapshot() const {
  std::vector<uint64_t> out(kBuckets);
  for (int i = 0; i < kBuckets; ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

double LatencyHistogram::Quantile(const std::vector<uint64_t>& counts, double q) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0) return 0;
  const double rank = q * static_cast<double>(total);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (static_cast<double>(seen) >= rank) return UpperBoundSeconds(static_cast<int>(i));
  }
  return UpperBoundSeconds(static_cast<int>(counts.size()) - 1);
}

std::vector<uint64_t> LatencyHistogram::Subtract(const std::vector<uint64_t>& a,
                                                 const std::vector<uint64_t>& b) {
  std::vector<uint64_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const uint64_t before = i < b.size() ? b[i] : 0;
    out[i] = a[i] >= before ? a[i] - before : 0;
  }
  return out;
}

}  // namespace infera
