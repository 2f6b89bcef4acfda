#include "tools/bench/load_driver.h"

#include <gtest/gtest.h>

#include "tools/bench/fake_infer_client.h"

namespace infera::bench {
namespace {

LoadSpec Closed(int concurrency) {
  LoadSpec spec;
  spec.mode = LoadSpec::Mode::kConcurrency;
  spec.concurrency = concurrency;
  return spec;
}

LoadSpec Open(double rate, ArrivalDistribution distribution = ArrivalDistribution::kConstant) {
  LoadSpec spec;
  spec.mode = LoadSpec::Mode::kRequestRate;
  spec.request_rate = rate;
  spec.distribution = distribution;
  return spec;
}

void ExpectCountsAddUp(const LoadDriver& driver) {
  const DriverTotals& t = driver.totals();
  EXPECT_EQ(t.sent, t.ok + t.errors + driver.in_flight());
}

TEST(LoadDriverTest, ClosedLoopKeepsConcurrencyOutstanding) {
  FakeClock clock;
  FakeInferClient client(clock, 8, /*num_payloads=*/3);
  LoadDriver driver(Closed(4), client, clock);
  driver.Start();
  EXPECT_EQ(client.pending().size(), 4u);
  EXPECT_FALSE(driver.Poll().has_value());
  for (int i = 0; i < 100; ++i) {
    clock.AdvanceNs(250 * kNsPerUs);
    ASSERT_TRUE(client.CompleteOldest());
    EXPECT_EQ(client.pending().size(), 4u);
  }
  ExpectCountsAddUp(driver);
  EXPECT_EQ(driver.totals().sent, 104);
  // Payloads rotate round-robin.
  EXPECT_EQ(client.pending()[0].payload_index, 100 % 3);
  EXPECT_EQ(client.pending()[1].payload_index, 101 % 3);
}

TEST(LoadDriverTest, ClosedLoopLatencyIsCompletionMinusSend) {
  FakeClock clock;
  FakeInferClient client(clock, 1);
  LoadDriver driver(Closed(1), client, clock);
  driver.Start();
  for (int i = 1; i <= 10; ++i) {
    clock.AdvanceNs(i * kNsPerMs);  // request i takes i ms
    client.CompleteOldest();
  }
  clock.AdvanceNs(kNsPerMs);
  WindowStats w = driver.TakeWindow();
  EXPECT_EQ(w.ok, 10);
  EXPECT_EQ(w.sent, 11);
  EXPECT_EQ(w.latency.min(), kNsPerMs);
  EXPECT_EQ(w.latency.max(), 10 * kNsPerMs);
  EXPECT_NEAR(w.latency.Percentile(50), 5 * kNsPerMs, 5 * kNsPerMs * 0.005);
  EXPECT_DOUBLE_EQ(w.duration_s(), 0.056);
  EXPECT_NEAR(w.Throughput(), 10 / 0.056, 1e-6);
  EXPECT_TRUE(w.send_lag.empty());  // closed loop has no schedule
}

TEST(LoadDriverTest, ErrorsAreCountedByKindWithFirstExample) {
  FakeClock clock;
  FakeInferClient client(clock, 2);
  LoadDriver driver(Closed(2), client, clock);
  driver.Start();
  client.CompleteOldest(ErrorResult("http 429", "queue full 1", 0));
  client.CompleteOldest(ErrorResult("http 429", "queue full 2", 0));
  client.CompleteOldest(ErrorResult("timeout", "after 1 s", 0));
  client.CompleteOldest();
  WindowStats w = driver.TakeWindow();
  EXPECT_EQ(w.errors, 3);
  EXPECT_EQ(w.ok, 1);
  EXPECT_EQ(w.error_counts["http 429"].count, 2);
  EXPECT_EQ(w.error_counts["http 429"].example, "queue full 1");
  EXPECT_EQ(w.error_counts["timeout"].count, 1);
  EXPECT_EQ(w.latency.count(), 1);  // only successes have a latency
  ExpectCountsAddUp(driver);
}

// Rate accuracy: with an instantly-answering server the driver sends exactly on
// schedule, whatever the granularity at which it is polled.
TEST(LoadDriverTest, ConstantRateIsExactWhenPolledLate) {
  FakeClock clock;
  FakeInferClient client(clock, 1000);
  LoadDriver driver(Open(1000), client, clock);  // one per ms
  driver.Start();
  const int64_t start = clock.NowNs();
  // Poll every 7.3 ms (a coarse, irregular timer): arrivals come in bursts but none is
  // lost and none is early.
  while (clock.NowNs() - start < 10 * kNsPerSecond) {
    clock.AdvanceNs(7'300 * kNsPerUs);
    std::optional<int64_t> next = driver.Poll();
    ASSERT_TRUE(next.has_value());
    EXPECT_GT(*next, clock.NowNs());
    while (client.CompleteOldest()) {
    }
  }
  // Arrivals 0..N with offset k ms <= elapsed.
  const int64_t elapsed_ms = (clock.NowNs() - start) / kNsPerMs;
  EXPECT_EQ(driver.totals().sent, elapsed_ms + 1);
  EXPECT_EQ(driver.totals().ok, driver.totals().sent);
  WindowStats w = driver.TakeWindow();
  // Send lag is at most the polling period.
  EXPECT_LE(w.send_lag.max(), 7'300 * kNsPerUs);
  EXPECT_EQ(w.send_lag.count(), w.ok);
}

TEST(LoadDriverTest, ConstantRateHasNoLagWhenPolledOnTime) {
  FakeClock clock;
  FakeInferClient client(clock, 10);
  LoadDriver driver(Open(250), client, clock);
  driver.Start();  // arrival 0 goes out at once
  std::optional<int64_t> next = driver.Poll();
  clock.AdvanceNs(100 * kNsPerUs);
  client.CompleteOldest();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(next.has_value());
    clock.SetNs(*next);
    next = driver.Poll();
    clock.AdvanceNs(100 * kNsPerUs);
    client.CompleteOldest();
  }
  WindowStats w = driver.TakeWindow();
  EXPECT_EQ(w.ok, 1001);
  EXPECT_EQ(w.send_lag.max(), 0);
  EXPECT_EQ(w.latency.max(), 100 * kNsPerUs);
  // 1001 sends at exactly 4 ms apart: 1000 intervals = 4 s.
  EXPECT_EQ(driver.totals().sent, 1001);
}

TEST(LoadDriverTest, PoissonRateIsAccurateOverARun) {
  FakeClock clock;
  FakeInferClient client(clock, 64);
  LoadDriver driver(Open(5000, ArrivalDistribution::kPoisson), client, clock);
  driver.Start();
  const int64_t start = clock.NowNs();
  std::optional<int64_t> next = driver.Poll();
  while (clock.NowNs() - start < 20 * kNsPerSecond) {
    clock.SetNs(*next);
    next = driver.Poll();
    while (client.CompleteOldest()) {
    }
  }
  const double seconds = static_cast<double>(clock.NowNs() - start) / 1e9;
  EXPECT_NEAR(driver.totals().sent / seconds, 5000, 5000 * 0.02);
}

TEST(LoadDriverTest, OpenLoopBacklogsWhenNoSlotAndCountsTheWait) {
  FakeClock clock;
  FakeInferClient client(clock, /*max_in_flight=*/2);
  LoadDriver driver(Open(1000), client, clock);  // due at 0, 1, 2, 3, 4 ms
  driver.Start();                                 // arrival 0 sent
  clock.AdvanceNs(4 * kNsPerMs);
  driver.Poll();  // arrivals 1..4 due: 1 sent, 2..4 backlogged
  EXPECT_EQ(client.pending().size(), 2u);
  EXPECT_EQ(driver.backlog(), 3u);
  clock.AdvanceNs(kNsPerMs);  // t = 5 ms
  client.CompleteOldest();    // arrival 0 done: latency 5 ms; arrival 2 goes out 3 ms late
  EXPECT_EQ(driver.backlog(), 2u);
  EXPECT_EQ(client.pending().size(), 2u);
  clock.AdvanceNs(kNsPerMs);  // t = 6 ms
  client.CompleteOldest();    // arrival 1 done (scheduled 1 ms): latency 5 ms
  client.CompleteOldest();    // arrival 2 (scheduled 2 ms) done: latency 4 ms, lag 3 ms
  WindowStats w = driver.TakeWindow();
  EXPECT_EQ(w.ok, 3);
  EXPECT_EQ(w.latency.max(), 5 * kNsPerMs);
  EXPECT_EQ(w.latency.min(), 4 * kNsPerMs);
  EXPECT_EQ(w.send_lag.max(), 3 * kNsPerMs);
  ExpectCountsAddUp(driver);
}

TEST(LoadDriverTest, StopDropsTheBacklogAndLetsOutstandingFinish) {
  FakeClock clock;
  FakeInferClient client(clock, 1);
  LoadDriver driver(Open(1000), client, clock);
  driver.Start();
  clock.AdvanceNs(10 * kNsPerMs);
  driver.Poll();
  EXPECT_EQ(driver.backlog(), 10u);
  driver.Stop();
  EXPECT_FALSE(driver.Poll().has_value());
  EXPECT_EQ(driver.totals().dropped, 10);
  EXPECT_EQ(driver.in_flight(), 1);
  client.CompleteOldest();
  EXPECT_EQ(driver.in_flight(), 0);
  EXPECT_TRUE(client.pending().empty());  // nothing new after Stop
  WindowStats w = driver.TakeWindow();
  EXPECT_EQ(w.dropped, 10);
  EXPECT_EQ(w.ok, 1);
  ExpectCountsAddUp(driver);
}

TEST(LoadDriverTest, ClosedLoopStopLetsOutstandingDrain) {
  FakeClock clock;
  FakeInferClient client(clock, 4);
  LoadDriver driver(Closed(4), client, clock);
  driver.Start();
  driver.Stop();
  while (client.CompleteOldest()) {
  }
  EXPECT_EQ(driver.in_flight(), 0);
  EXPECT_EQ(driver.totals().sent, 4);
  EXPECT_EQ(driver.totals().ok, 4);
}

TEST(LoadDriverTest, WindowsPartitionCompletions) {
  FakeClock clock;
  FakeInferClient client(clock, 1);
  LoadDriver driver(Closed(1), client, clock);
  driver.Start();
  int64_t total_ok = 0;
  for (int window = 0; window < 5; ++window) {
    for (int i = 0; i < 10 + window; ++i) {
      clock.AdvanceNs(kNsPerMs);
      client.CompleteOldest();
    }
    WindowStats w = driver.TakeWindow();
    EXPECT_EQ(w.ok, 10 + window);
    total_ok += w.ok;
  }
  EXPECT_EQ(total_ok, driver.totals().ok);
}

TEST(LoadDriverTest, StreamingResultsFillTtftAndTpot) {
  FakeClock clock;
  FakeInferClient client(clock, 1);
  LoadDriver driver(Closed(1), client, clock);
  driver.Start();
  const int64_t sent = clock.NowNs();
  clock.AdvanceNs(50 * kNsPerMs);
  RequestResult r = FakeInferClient::OkResult();
  r.first_token_ns = sent + 20 * kNsPerMs;  // TTFT 20 ms
  r.output_tokens = 4;                      // 3 more tokens over 30 ms: TPOT 10 ms
  client.CompleteOldest(r);
  WindowStats w = driver.TakeWindow();
  EXPECT_EQ(w.ttft.max(), 20 * kNsPerMs);
  EXPECT_EQ(w.tpot.max(), 10 * kNsPerMs);
  EXPECT_EQ(w.output_tokens, 4);
}

TEST(WindowStatsTest, MergeAddsCountsAndSpansTime) {
  WindowStats a, b;
  a.start_ns = 100;
  a.end_ns = 200;
  a.ok = 3;
  a.latency.Record(5);
  a.error_counts["x"] = {1, "first"};
  b.start_ns = 150;
  b.end_ns = 300;
  b.ok = 2;
  b.errors = 1;
  b.error_counts["x"] = {2, "second"};
  a.Merge(b);
  EXPECT_EQ(a.start_ns, 100);
  EXPECT_EQ(a.end_ns, 300);
  EXPECT_EQ(a.ok, 5);
  EXPECT_EQ(a.error_counts["x"].count, 3);
  EXPECT_EQ(a.error_counts["x"].example, "first");
  WindowStats empty;
  empty.Merge(a);
  EXPECT_EQ(empty.start_ns, 100);
}

}  // namespace
}  // namespace infera::bench
