#include "manager/latency_histogram.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(LatencyHistogramTest, QuantilesAreWithinOneBucket) {
  LatencyHistogram h;
  for (int i = 1; i <= 1000; ++i) h.Record(static_cast<uint64_t>(i) * 1'000'000);  // 1..1000 ms
  const auto counts = h.Snapshot();
  const double p50 = LatencyHistogram::Quantile(counts, 0.5);
  const double p99 = LatencyHistogram::Quantile(counts, 0.99);
  EXPECT_GE(p50, 0.500);
  EXPECT_LE(p50, 0.500 * 1.1 + 1e-9);
  EXPECT_GE(p99, 0.990);
  EXPECT_LE(p99, 0.990 * 1.1 + 1e-9);
  EXPECT_EQ(LatencyHistogram::Quantile(std::vector<uint64_t>(LatencyHistogram::kBuckets, 0), 0.99), 0);
}

TEST(LatencyHistogramTest, WindowsAreSnapshotDifferences) {
  LatencyHistogram h;
  for (int i = 0; i < 100; ++i) h.Record(100'000'000);  // 100 ms: the past
  const auto before = h.Snapshot();
  for (int i = 0; i < 100; ++i) h.Record(1'000'000);  // 1 ms: the window
  const double p99 = LatencyHistogram::Quantile(LatencyHistogram::Subtract(h.Snapshot(), before), 0.99);
  EXPECT_LT(p99, 0.002);
  EXPECT_EQ(LatencyHistogram::BucketOf(0), 0);
  EXPECT_EQ(LatencyHistogram::BucketOf(uint64_t{1} << 62), LatencyHistogram::kBuckets - 1);
}

}  // namespace
}  // namespace infera
