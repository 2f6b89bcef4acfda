#include "scheduling/slo_batch_policy.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

using std::chrono::microseconds;

SchedulingOptions SloOptions(int64_t max_rows, int64_t slo_us) {
  SchedulingOptions options;
  options.batching = true;
  options.max_batch_rows = max_rows;
  options.latency_slo = microseconds(slo_us);
  options.policies.resize(1);
  return options;
}

// Teaches `policy` that a batch of n rows takes 1 ms + 0.1 ms * n, exactly.
void LearnLinearCost(SloBatchPolicy& policy) {
  for (int round = 0; round < 4; ++round) {
    for (int64_t n : {1, 8, 16, 32}) policy.OnExecuted(n, microseconds(1000 + 100 * n));
  }
}

// Arrivals of one row every `gap`.
void Arrivals(SloBatchPolicy& policy, FakeClock& clock, int count, microseconds gap) {
  for (int i = 0; i < count; ++i) {
    clock.Advance(gap);
    policy.OnArrival(1, clock.Now());
  }
}

TEST(ComputeTimeModelTest, PredictsSeenSizesAndExtrapolatesLinearly) {
  ComputeTimeModel model(64);
  EXPECT_FALSE(model.PredictHigh(4).has_value());
  for (int i = 0; i < 20; ++i) {
    model.Observe(2, 0.002);
    model.Observe(10, 0.010);
  }
  EXPECT_NEAR(*model.PredictHigh(2), 0.002, 1e-4);  // deviation has decayed
  EXPECT_NEAR(*model.PredictHigh(6), 0.006, 5e-4);
  EXPECT_NEAR(*model.PredictHigh(40), 0.040, 2e-3);
  EXPECT_GE(*model.PredictHigh(11), *model.PredictHigh(10));
}

TEST(SloBatchPolicyTest, RunsAtOnceUntilItHasLearned) {
  SloBatchPolicy policy(SloOptions(32, 20000));
  FakeClock clock;
  Arrivals(policy, clock, 10, microseconds(100));
  EXPECT_EQ(policy.Decide({{1}, clock.Now()}, clock.Now()).num_requests, 1u);
}

TEST(SloBatchPolicyTest, UnderLoadWaitsOnlyUntilTheBatchKeepsUp) {
  SloBatchPolicy policy(SloOptions(32, 20000));  // budget = 16 ms, 1 instance
  LearnLinearCost(policy);                        // c(n) = 1 ms + 0.1 ms * n
  FakeClock clock;
  Arrivals(policy, clock, 50, microseconds(500));  // 2000 rows/s
  EXPECT_NEAR(policy.arrival_rate(), 2000, 1);
  // Keeps up at 80 % utilisation when 2000 * c(m) <= 0.8 * m: m >= 4 (m = 3: 2.6 > 2.4).
  // So with 1 row pending it waits for 3 more rows (1.5 ms), not for the whole budget.
  BatchDecision decision = policy.Decide({{1}, clock.Now()}, clock.Now());
  ASSERT_EQ(decision.num_requests, 0u);
  const double wait = std::chrono::duration<double>(*decision.wake_at - clock.Now()).count();
  EXPECT_NEAR(wait, 0.0015, 1e-6);
  // Four rows keep up already: run them now.
  EXPECT_EQ(policy.Decide({{1, 1, 1, 1}, clock.Now()}, clock.Now()).num_requests, 4u);
}

TEST(SloBatchPolicyTest, MoreInstancesKeepUpWithSmallerBatches) {
  SloBatchPolicy policy(SloOptions(32, 20000), /*num_instances=*/2);
  LearnLinearCost(policy);
  FakeClock clock;
  Arrivals(policy, clock, 50, microseconds(500));  // 2000 rows/s over 2 instances
  // 2000 * c(m) <= 0.8 * 2 * m: m >= 2 (m = 1: 2.2 > 1.6; m = 2: 2.4 <= 3.2).
  BatchDecision decision = policy.Decide({{1}, clock.Now()}, clock.Now());
  ASSERT_EQ(decision.num_requests, 0u);
  EXPECT_NEAR(std::chrono::duration<double>(*decision.wake_at - clock.Now()).count(), 0.0005, 1e-6);
  EXPECT_EQ(policy.Decide({{1, 1}, clock.Now()}, clock.Now()).num_requests, 2u);
}

TEST(SloBatchPolicyTest, NearSaturationWaitsAsLongAsTheSloAllows) {
  SloBatchPolicy policy(SloOptions(256, 20000));  // budget = 16 ms
  LearnLinearCost(policy);
  FakeClock clock;
  Arrivals(policy, clock, 50, microseconds(125));  // 8000 rows/s: 8000 * c(m) > 0.8 * m for every m
  const SteadyTime oldest = clock.Now();
  BatchDecision decision = policy.Decide({{1}, oldest}, clock.Now());
  ASSERT_EQ(decision.num_requests, 0u);
  const double wait = std::chrono::duration<double>(*decision.wake_at - clock.Now()).count();
  // Worst case at the end of the wait: wait + c(1 + 8000*wait) within the 16 ms budget,
  // and long enough to gather many rows.
  const int64_t rows = 1 + static_cast<int64_t>(8000 * wait);
  EXPECT_LE(wait + *policy.compute_model().PredictHigh(rows), 0.016 + 1e-9);
  EXPECT_GE(rows, 40);
}

TEST(SloBatchPolicyTest, RunsWhenTheOldestRequestHasUsedItsBudget) {
  SloBatchPolicy policy(SloOptions(32, 20000));
  LearnLinearCost(policy);
  FakeClock clock;
  Arrivals(policy, clock, 50, microseconds(500));
  const SteadyTime oldest = clock.Now();
  clock.Advance(microseconds(14500));  // 14.5 ms waited + c(4) = 1.4 ms -> 15.9 of 16 ms
  EXPECT_EQ(policy.Decide({{1, 1, 1, 1}, oldest}, clock.Now()).num_requests, 4u);
}

TEST(SloBatchPolicyTest, LightLoadDoesNotWaitForRowsThatWillNotCome) {
  SloBatchPolicy policy(SloOptions(32, 20000));
  LearnLinearCost(policy);
  FakeClock clock;
  Arrivals(policy, clock, 10, microseconds(100000));  // 10 rows/s: next one in ~100 ms
  EXPECT_EQ(policy.Decide({{1}, clock.Now()}, clock.Now()).num_requests, 1u);
}

TEST(SloBatchPolicyTest, FullBatchRunsAtOnce) {
  SloBatchPolicy policy(SloOptions(4, 20000));
  LearnLinearCost(policy);
  FakeClock clock;
  EXPECT_EQ(policy.Decide({{2, 2}, clock.Now()}, clock.Now()).num_requests, 2u);
}

}  // namespace
}  // namespace infera
