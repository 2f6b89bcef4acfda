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
  b.llm = GenerationMetrics{};
  b.llm->preemptions = 3;
  b.llm->generation_tokens = 800;
  b.llm->num_waiting = 2;
  const WindowSummary w = Summarize(nullptr, b, t0, ModelFacts{});
  EXPECT_DOUBLE_EQ(w.seconds, 4.0);
  EXPECT_DOUBLE_EQ(w.traffic_seconds, 4.0);
  EXPECT_EQ(w.requests, 40u);
  ASSERT_TRUE(w.llm.has_value());
  EXPECT_EQ(w.llm->preemptions, 3u);
  EXPECT_DOUBLE_EQ(w.llm->tokens_per_second, 200.0);
  EXPECT_EQ(w.llm->num_waiting, 2);
  EXPECT_EQ(w.llm->num_waiting_peak, 2);
}

// Regression (issue 30): a 5 s burst in a 60 s window. Rates and utilisation are over
// the 5 seconds that carried traffic (it was "saturated (utilisation 10 %)" before).
TEST(WindowSummaryTest, UtilisationAndRateOverTheSecondsWithTraffic) {
  const Clock::time_point t0 = Clock::now();
  std::vector<DiagnosisSample> ring;
  ring.push_back(At(t0));
  ring.back().load.num_instances = 1;
  for (int second = 1; second <= 60; ++second) {
    DiagnosisSample s = ring.back();
    s.time = t0 + std::chrono::seconds(second);
    s.in_flight = 0;
    if (second > 20 && second <= 25) {  // the burst: 1 instance busy all along
      s.stats.success.count += 40;
      s.stats.success.ns += 40 * 100'000'000ull;
      s.load.busy_ns += 980'000'000;
      s.in_flight = 8;
    }
    ring.push_back(s);
  }
  std::vector<const DiagnosisSample*> between;
  for (size_t i = 1; i + 1 < ring.size(); ++i) between.push_back(&ring[i]);
  const WindowSummary w = Summarize(&ring.front(), ring.back(), t0, ModelFacts{}, between);
  EXPECT_DOUBLE_EQ(w.seconds, 60.0);
  // Seconds 21..25 changed; in-flight requests at second 25's end also mark the 26th.
  EXPECT_DOUBLE_EQ(w.traffic_seconds, 6.0);
  EXPECT_EQ(w.requests, 200u);
  EXPECT_NEAR(w.utilisation, 4.9 / 6.0, 1e-9);
  EXPECT_NEAR(w.rate_per_second, 200.0 / 6.0, 1e-9);
  // Without the samples between, the whole window counts (the old reading: 8 %).
  const WindowSummary diluted = Summarize(&ring.front(), ring.back(), t0, ModelFacts{});
  EXPECT_NEAR(diluted.utilisation, 4.9 / 60.0, 1e-9);
}

// The engine's latencies from its histograms' differences; gauges at their peak and
// mean over the samples with traffic, not at the (idle) moment the window ends.
TEST(WindowSummaryTest, LlmFiguresFromHistogramsAndTrafficGauges) {
  const Clock::time_point t0 = Clock::now();
  auto engine = [] {
    GenerationMetrics g;
    g.time_to_first_token = Histogram::WithBounds({0.01, 0.1, 1});
    g.inter_token_latency = Histogram::WithBounds({0.01, 0.1, 1});
    g.e2e_request_latency = Histogram::WithBounds({0.1, 1, 10});
    g.queue_time = Histogram::WithBounds({0.1, 1, 10});
    g.max_num_seqs = 8;
    return g;
  };
  DiagnosisSample a = At(t0);
  a.llm = engine();
  a.llm->time_to_first_token.Observe(0.5);  // before the window
  DiagnosisSample mid = At(t0 + std::chrono::seconds(1));
  mid.llm = a.llm;
  mid.llm->num_running = 8;
  mid.llm->num_waiting = 4;
  mid.llm->kv_cache_usage = 0.6;
  mid.llm->generation_tokens = 100;
  DiagnosisSample b = At(t0 + std::chrono::seconds(2));
  b.llm = mid.llm;
  b.llm->num_running = 0;
  b.llm->num_waiting = 0;
  b.llm->kv_cache_usage = 0;
  b.llm->generation_tokens = 200;
  b.llm->prompt_tokens = 40;
  b.llm->requests_finished_length = 4;
  for (double ttft : {0.02, 0.04, 0.06, 0.08}) b.llm->time_to_first_token.Observe(ttft);
  for (int i = 0; i < 196; ++i) b.llm->inter_token_latency.Observe(0.005);
  for (int i = 0; i < 4; ++i) b.llm->e2e_request_latency.Observe(1.0);
  for (int i = 0; i < 4; ++i) b.llm->queue_time.Observe(0.01);
  b.stats.success = {4, 4'000'000'000};
  const WindowSummary w = Summarize(&a, b, t0, ModelFacts{}, {&mid});
  ASSERT_TRUE(w.llm.has_value());
  const WindowSummary::Llm& llm = *w.llm;
  EXPECT_EQ(llm.finished, 4u);
  EXPECT_NEAR(llm.ttft_ms, 50.0, 1e-9);  // the 0.5 s before the window is not in it
  EXPECT_NEAR(llm.tpot_ms, 5.0, 1e-9);
  EXPECT_NEAR(llm.e2e_ms, 1000.0, 1e-9);
  EXPECT_NEAR(llm.queue_ms, 10.0, 1e-9);
  EXPECT_NEAR(llm.prefill_ms, 40.0, 1e-9);
  EXPECT_NEAR(llm.decode_ms, 950.0, 1e-9);
  EXPECT_DOUBLE_EQ(llm.prompt_tokens_per_request, 10.0);
  EXPECT_DOUBLE_EQ(llm.output_tokens_per_request, 50.0);
  EXPECT_DOUBLE_EQ(llm.tokens_per_second, 100.0);  // 200 tokens over 2 traffic seconds
  EXPECT_EQ(llm.num_running_peak, 8);
  EXPECT_EQ(llm.num_waiting_peak, 4);
  EXPECT_DOUBLE_EQ(llm.kv_cache_usage_peak, 0.6);
  EXPECT_DOUBLE_EQ(llm.kv_cache_usage_mean, 0.3);
  EXPECT_EQ(llm.num_running, 0);  // when the window ended
  EXPECT_EQ(llm.max_num_seqs, 8);
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
