#include "diagnosis/window_summary.h"

#include "gtest/gtest.h"

namespace infera::diagnosis {
namespace {

using Clock = std::chrono::steady_clock;

DiagnosisSample At(Clock::time_point time) {
  DiagnosisSample s;
  s.time = time;
  s.load.num_instances = 2;
  return s;
}

// Two samples 10 s apart: differences become per-request means, shares, rates and the
// utilisation over the window.
TEST(WindowSummaryTest, DifferencesBecomeMeansSharesAndRates) {
  const Clock::time_point t0 = Clock::now();
  DiagnosisSample a = At(t0);
  a.stats.success = {100, 100 * 1'000'000};  // earlier traffic, not in the window
  a.stats.queue = {100, 100 * 500'000};
  a.load.busy_ns = 1'000'000'000;
  DiagnosisSample b = At(t0 + std::chrono::seconds(10));
  b.stats.success = {300, a.stats.success.ns + 200 * 2'000'000};  // 200 requests of 2 ms
  b.stats.fail = {10, 10'000'000};
  b.stats.queue = {300, a.stats.queue.ns + 200 * 1'000'000};  // 1 ms queue each
  b.stats.compute_infer = {200, 200 * 600'000};
  b.stats.decode = {210, 210 * 200'000};
  b.stats.encode = {200, 200 * 200'000};
  b.stats.write = {200, 200 * 100'000};
  b.stats.write_failed = 3;
  b.stats.failures.rejected = 10;
  b.load.busy_ns = a.load.busy_ns + 5'000'000'000;  // 5 s busy of 20 instance-seconds
  StatisticsSnapshot::BatchSize size1{1, {}, {100, 0}, {}};
  StatisticsSnapshot::BatchSize size4{4, {}, {25, 0}, {}};
  b.stats.batch_stats = {size1, size4};

  const WindowSummary w = Summarize(&a, b, t0, ModelFacts{8, true, 100, false});
  EXPECT_DOUBLE_EQ(w.seconds, 10.0);
  EXPECT_EQ(w.requests, 210u);
  EXPECT_EQ(w.successes, 200u);
  EXPECT_DOUBLE_EQ(w.rate_per_second, 21.0);
  EXPECT_DOUBLE_EQ(w.mean_latency_us, 2000.0);
  EXPECT_NEAR(w.concurrency, 21.0 * 0.002, 1e-9);
  EXPECT_DOUBLE_EQ(w.queue.mean_us, 1000.0);
  EXPECT_DOUBLE_EQ(w.compute_infer.mean_us, 600.0);
  EXPECT_DOUBLE_EQ(w.server_us, 200.0 + 1000.0 + 600.0 + 200.0);
  EXPECT_DOUBLE_EQ(w.queue.share, 0.5);
  EXPECT_DOUBLE_EQ(w.compute_share, 0.3);
  EXPECT_DOUBLE_EQ(w.serialisation_share, 0.2);
  EXPECT_DOUBLE_EQ(w.write.share, 100.0 / 2100.0);
  EXPECT_EQ(w.executions, 125u);
  EXPECT_EQ(w.rows, 200u);
  EXPECT_DOUBLE_EQ(w.mean_batch_size, 1.6);
  EXPECT_EQ(w.batch_sizes.at(4), 25u);
  EXPECT_DOUBLE_EQ(w.utilisation, 0.25);
  EXPECT_EQ(w.failures.rejected, 10u);
  EXPECT_EQ(w.write_failed, 3u);
  EXPECT_FALSE(w.llm.has_value());
}

// Without an older sample the window starts at the counters' creation, from zero.
TEST(WindowSummaryTest, NoOlderSampleMeansFromCreation) {
  const Clock::time_point t0 = Clock::now();
  DiagnosisSample b = At(t0 + std::chrono::seconds(4));
  b.stats.success = {40, 40'000'000};
  b.llm = LlmSample{3, 800, 0.95, 4, 2, 8};
  const WindowSummary w = Summarize(nullptr, b, t0, ModelFacts{});
  EXPECT_DOUBLE_EQ(w.seconds, 4.0);
  EXPECT_EQ(w.requests, 40u);
  ASSERT_TRUE(w.llm.has_value());
  EXPECT_EQ(w.llm->preemptions, 3u);
  EXPECT_DOUBLE_EQ(w.llm->tokens_per_second, 200.0);
  EXPECT_EQ(w.llm->num_waiting, 2);
}

// Counters never go backwards, but a summary of mismatched samples must not wrap.
TEST(WindowSummaryTest, BackwardsCountersSaturateAtZero) {
  const Clock::time_point t0 = Clock::now();
  DiagnosisSample a = At(t0);
  a.stats.success = {50, 50'000};
  a.load.busy_ns = 10;
  DiagnosisSample b = At(t0);  // same time: zero-length window
  const WindowSummary w = Summarize(&a, b, t0, ModelFacts{});
  EXPECT_EQ(w.requests, 0u);
  EXPECT_EQ(w.rate_per_second, 0.0);
  EXPECT_EQ(w.utilisation, 0.0);
  EXPECT_EQ(w.busy_seconds, 0.0);
}

}  // namespace
}  // namespace infera::diagnosis
