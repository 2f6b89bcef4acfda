#include "scheduling/batch_policy.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

using std::chrono::microseconds;

SchedulingOptions Batching(int64_t max_rows, std::vector<int64_t> preferred, int64_t delay_us) {
  SchedulingOptions options;
  options.batching = true;
  options.max_batch_rows = max_rows;
  options.preferred_batch_sizes = std::move(preferred);
  options.max_queue_delay = microseconds(delay_us);
  options.policies.resize(1);
  return options;
}

TEST(DelayBatchPolicyTest, WithoutBatchingRunsAtOnce) {
  SchedulingOptions options;
  options.policies.resize(1);
  DelayBatchPolicy policy(options);
  FakeClock clock;
  EXPECT_EQ(policy.Decide({{3}, clock.Now()}, clock.Now()).num_requests, 1u);
}

TEST(DelayBatchPolicyTest, AWaitNamesTheRowsThatCouldEndItEarly) {
  FakeClock clock;
  // No preferred sizes: only a full batch runs before the delay.
  DelayBatchPolicy plain(Batching(8, {}, 100));
  BatchDecision wait = plain.Decide({{1, 1}, clock.Now()}, clock.Now());
  EXPECT_EQ(wait.num_requests, 0u);
  EXPECT_EQ(wait.wake_rows, 8);
  // And below wake_rows the answer is the same wait, whatever arrives.
  EXPECT_EQ(plain.Decide({{1, 1, 1, 1, 1, 1, 1}, clock.Now()}, clock.Now()).num_requests, 0u);
  EXPECT_EQ(plain.Decide({{1, 1, 1, 1, 1, 1, 1, 1}, clock.Now()}, clock.Now()).num_requests, 8u);
  // Preferred sizes: the largest one ends the wait (smaller ones only at the delay).
  DelayBatchPolicy preferred(Batching(16, {2, 4}, 100));
  EXPECT_EQ(preferred.Decide({{1}, clock.Now()}, clock.Now()).wake_rows, 4);
  EXPECT_EQ(preferred.Decide({{1, 1, 1}, clock.Now()}, clock.Now()).num_requests, 0u);
  EXPECT_EQ(preferred.Decide({{1, 1, 1, 1}, clock.Now()}, clock.Now()).num_requests, 4u);
}

TEST(DelayBatchPolicyTest, FullBatchRunsAtOnce) {
  DelayBatchPolicy policy(Batching(4, {}, 1'000'000));
  FakeClock clock;
  EXPECT_EQ(policy.Decide({{1, 1, 2}, clock.Now()}, clock.Now()).num_requests, 3u);
}

TEST(DelayBatchPolicyTest, WaitsForTheDelayThenRunsWhatIsThere) {
  DelayBatchPolicy policy(Batching(8, {}, 100));
  FakeClock clock;
  const SteadyTime oldest = clock.Now();
  BatchDecision wait = policy.Decide({{1, 1}, oldest}, clock.Now());
  EXPECT_EQ(wait.num_requests, 0u);
  EXPECT_EQ(*wait.wake_at, oldest + microseconds(100));
  clock.Advance(microseconds(100));
  EXPECT_EQ(policy.Decide({{1, 1, 1}, oldest}, clock.Now()).num_requests, 3u);
}

TEST(DelayBatchPolicyTest, HugeDelaySaturatesInsteadOfRunningAtOnce) {
  // oldest + 2^63-1 µs used to wrap into the past, so every batch ran at once.
  DelayBatchPolicy policy(Batching(8, {}, INT64_MAX));
  FakeClock clock;
  clock.Advance(std::chrono::hours(1));
  BatchDecision wait = policy.Decide({{1, 1}, clock.Now()}, clock.Now());
  EXPECT_EQ(wait.num_requests, 0u);
  ASSERT_TRUE(wait.wake_at.has_value());
  EXPECT_EQ(*wait.wake_at, SteadyTime::max());
}

TEST(DelayBatchPolicyTest, ZeroDelayRunsWhateverIsPending) {
  DelayBatchPolicy policy(Batching(8, {}, 0));
  FakeClock clock;
  EXPECT_EQ(policy.Decide({{1, 2}, clock.Now()}, clock.Now()).num_requests, 2u);
}

TEST(DelayBatchPolicyTest, LargestPreferredSizeRunsAtOnce) {
  DelayBatchPolicy policy(Batching(16, {2, 4}, 1'000'000));
  FakeClock clock;
  EXPECT_EQ(policy.Decide({{1, 1, 2, 1}, clock.Now()}, clock.Now()).num_requests, 3u);  // 1+1+2 = 4
  // A smaller preferred size waits for the delay (a bigger one may still form)...
  EXPECT_EQ(policy.Decide({{1, 1}, clock.Now()}, clock.Now()).num_requests, 0u);
  // ...and at the delay runs the longest preferred prefix.
  const SteadyTime oldest = clock.Now();
  clock.Advance(std::chrono::seconds(2));
  EXPECT_EQ(policy.Decide({{1, 1, 1}, oldest}, clock.Now()).num_requests, 2u);
  // No preferred prefix at all: everything pending.
  EXPECT_EQ(policy.Decide({{3}, oldest}, clock.Now()).num_requests, 1u);
}

TEST(DelayBatchPolicyTest, PastTheLargestPreferredSizeRunsWhatFits) {
  DelayBatchPolicy policy(Batching(16, {4}, 1'000'000));
  FakeClock clock;
  EXPECT_EQ(policy.Decide({{3, 3}, clock.Now()}, clock.Now()).num_requests, 1u);
  EXPECT_EQ(policy.Decide({{5, 1}, clock.Now()}, clock.Now()).num_requests, 1u);  // at least one
}


// --- An instance's share (no preferred sizes, more than one instance) ---

PendingBatch Ones(int n, SteadyTime oldest) { return {std::vector<int64_t>(n, 1), oldest}; }

TEST(DelayBatchPolicyTest, AnInstancesShareRunsAtOnce) {
  // max 64, 2 instances: a share is 32 rows.
  DelayBatchPolicy policy(Batching(64, {}, 1'000'000), 2);
  EXPECT_EQ(policy.InstanceShare(), 32);
  FakeClock clock;
  const SteadyTime oldest = clock.Now();
  BatchDecision wait = policy.Decide(Ones(31, oldest), clock.Now());
  EXPECT_EQ(wait.num_requests, 0u);
  EXPECT_EQ(wait.wake_rows, 32);  // the arrival that forms the share wakes the worker
  EXPECT_EQ(policy.Decide(Ones(32, oldest), clock.Now()).num_requests, 32u);
  // A longer queue (it grew while the instances were busy): one share per batch.
  EXPECT_EQ(policy.Decide(Ones(64, oldest), clock.Now()).num_requests, 32u);
  // Three instances, max 30: shares of 10.
  DelayBatchPolicy three(Batching(30, {}, 1'000'000), 3);
  EXPECT_EQ(three.Decide(Ones(25, oldest), clock.Now()).num_requests, 10u);
  // Odd max: ceil(7 / 2) = 4.
  EXPECT_EQ(DelayBatchPolicy(Batching(7, {}, 1000), 2).InstanceShare(), 4);
}

TEST(DelayBatchPolicyTest, BelowAShareTheDelayDecidesAsBefore) {
  // The ranker: max 256, 2 instances (a share: 128), 64 clients: the batch waits
  // for the delay, then all 64 run together.
  DelayBatchPolicy policy(Batching(256, {}, 1000), 2);
  FakeClock clock;
  const SteadyTime oldest = clock.Now();
  BatchDecision wait = policy.Decide(Ones(64, oldest), clock.Now());
  EXPECT_EQ(wait.num_requests, 0u);
  EXPECT_EQ(wait.wake_rows, 128);
  EXPECT_EQ(*wait.wake_at, oldest + microseconds(1000));
  clock.Advance(microseconds(1000));
  EXPECT_EQ(policy.Decide(Ones(64, oldest), clock.Now()).num_requests, 64u);
  EXPECT_EQ(policy.Decide(Ones(1, oldest), clock.Now()).num_requests, 1u);
}

TEST(DelayBatchPolicyTest, AShareNeverSplitsARequest) {
  DelayBatchPolicy policy(Batching(8, {}, 1000), 2);  // share 4
  FakeClock clock;
  const SteadyTime oldest = clock.Now();
  EXPECT_EQ(policy.Decide({{5, 1, 2}, oldest}, clock.Now()).num_requests, 1u);     // 5 rows alone
  EXPECT_EQ(policy.Decide({{1, 2, 1, 4}, oldest}, clock.Now()).num_requests, 3u);  // 1 + 2 + 1
  EXPECT_EQ(policy.Decide({{3, 2}, oldest}, clock.Now()).num_requests, 1u);        // 3, then 2
}

TEST(DelayBatchPolicyTest, PreferredSizesOrOneInstanceKeepTritonsRule) {
  FakeClock clock;
  const SteadyTime oldest = clock.Now();
  DelayBatchPolicy preferred(Batching(64, {16}, 1000), 2);
  EXPECT_EQ(preferred.InstanceShare(), 64);
  EXPECT_EQ(preferred.Decide(Ones(12, oldest), clock.Now()).wake_rows, 16);
  DelayBatchPolicy single(Batching(64, {}, 1000), 1);
  EXPECT_EQ(single.InstanceShare(), 64);
  EXPECT_EQ(single.Decide(Ones(40, oldest), clock.Now()).num_requests, 0u);
  EXPECT_EQ(single.Decide(Ones(64, oldest), clock.Now()).num_requests, 64u);
  clock.Advance(microseconds(1000));
  EXPECT_EQ(preferred.Decide(Ones(12, oldest), clock.Now()).num_requests, 12u);
  EXPECT_EQ(single.Decide(Ones(40, oldest), clock.Now()).num_requests, 40u);
  // Without batching every request runs alone.
  SchedulingOptions plain;
  plain.policies.resize(1);
  DelayBatchPolicy unbatched(plain, 2);
  EXPECT_EQ(unbatched.Decide(Ones(1, oldest), clock.Now()).num_requests, 1u);
}

}  // namespace
}  // namespace infera
