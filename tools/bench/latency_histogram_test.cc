#include "tools/bench/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace infera::bench {
namespace {

// The exact nearest-rank percentile of a sample, for comparison.
int64_t ExactPercentile(std::vector<int64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(p / 100 * values.size())));
  return values[rank - 1];
}

TEST(LatencyHistogramTest, EmptyReportsZeros) {
  LatencyHistogram h;
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.Percentile(50), 0);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.Mean(), 0);
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int v = 1; v <= 100; ++v) h.Record(v);
  EXPECT_EQ(h.count(), 100);
  EXPECT_EQ(h.Percentile(50), 50);
  EXPECT_EQ(h.Percentile(90), 90);
  EXPECT_EQ(h.Percentile(99), 99);
  EXPECT_EQ(h.Percentile(99.9), 100);
  EXPECT_EQ(h.Percentile(0), 1);
  EXPECT_EQ(h.Percentile(100), 100);
  EXPECT_DOUBLE_EQ(h.Mean(), 50.5);
}

TEST(LatencyHistogramTest, NearestRankDefinition) {
  LatencyHistogram h;
  for (int v : {10, 20, 30, 40}) h.Record(v);
  EXPECT_EQ(h.Percentile(25), 10);  // rank ceil(1.0) = 1
  EXPECT_EQ(h.Percentile(26), 20);  // rank ceil(1.04) = 2
  EXPECT_EQ(h.Percentile(50), 20);
  EXPECT_EQ(h.Percentile(75), 30);
  EXPECT_EQ(h.Percentile(76), 40);
}

TEST(LatencyHistogramTest, BucketsTileTheRangeWithoutGaps) {
  for (int i = 0; i + 1 < LatencyHistogram::NumBuckets(); ++i) {
    ASSERT_EQ(LatencyHistogram::BucketUpper(i) + 1, LatencyHistogram::BucketLower(i + 1)) << i;
    ASSERT_EQ(LatencyHistogram::BucketIndex(LatencyHistogram::BucketLower(i)), i);
    ASSERT_EQ(LatencyHistogram::BucketIndex(LatencyHistogram::BucketUpper(i)), i);
  }
  EXPECT_EQ(LatencyHistogram::BucketUpper(LatencyHistogram::NumBuckets() - 1),
            LatencyHistogram::kMaxTrackableNs);
}

TEST(LatencyHistogramTest, RelativeErrorIsBounded) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(2e6), 1.0);  // ~2 ms, heavy tail
  LatencyHistogram h;
  std::vector<int64_t> values;
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = static_cast<int64_t>(dist(rng));
    values.push_back(v);
    h.Record(v);
  }
  for (double p : {1.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9}) {
    const double exact = static_cast<double>(ExactPercentile(values, p));
    EXPECT_NEAR(static_cast<double>(h.Percentile(p)), exact, exact * 0.005) << "p" << p;
  }
  EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
}

TEST(LatencyHistogramTest, MergeEqualsRecordingEverything) {
  LatencyHistogram a, b, all;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = (i * 7919) % 5'000'000;
    (i % 3 ? a : b).Record(v);
    all.Record(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.Mean(), all.Mean());
  for (double p : {50.0, 90.0, 99.0}) EXPECT_EQ(a.Percentile(p), all.Percentile(p));
}

TEST(LatencyHistogramTest, ClampsOutOfRangeValues) {
  LatencyHistogram h;
  h.Record(-5);
  h.Record(LatencyHistogram::kMaxTrackableNs * 4);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), LatencyHistogram::kMaxTrackableNs);
  h.Clear();
  EXPECT_TRUE(h.empty());
}

TEST(LatencyHistogramTest, RecordNCountsMultiples) {
  LatencyHistogram h;
  h.RecordN(1000, 99);
  h.RecordN(1'000'000, 1);
  EXPECT_EQ(h.count(), 100);
  EXPECT_NEAR(h.Percentile(99), 1000, 5);  // within its bucket (0.4 %)
  EXPECT_EQ(h.Percentile(99.5), 1'000'000);
}

}  // namespace
}  // namespace infera::bench
