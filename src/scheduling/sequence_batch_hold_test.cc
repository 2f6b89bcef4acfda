#include "scheduling/sequence_batch_hold.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using std::chrono::microseconds;

SequenceBatchingOptions Options(const std::string& strategy, int max_batch_size = 4) {
  inference::ModelConfig config;
  const std::string text = "name: 'm' max_batch_size: " + std::to_string(max_batch_size) +
                           " input { name: 'INPUT' data_type: TYPE_INT32 dims: [1] } sequence_batching { " +
                           strategy + " }";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  auto options = SequenceBatchingOptionsFromConfig(config, 16);
  EXPECT_TRUE(options.ok()) << options.status();
  return *options;
}

const SteadyTime kArrival = SteadyTime(std::chrono::seconds(100));

// The plan as (held until, or -1 µs after kArrival when run now; rows when run now).
std::pair<int64_t, int> Plan(const SequenceBatchingOptions& options, int ready, int64_t now_us = 0) {
  const SequenceBatchPlan plan = PlanSequenceBatch(options, ready, kArrival, kArrival + microseconds(now_us));
  if (plan.hold_until) {
    return {std::chrono::duration_cast<microseconds>(*plan.hold_until - kArrival).count(), 0};
  }
  return {-1, plan.rows};
}

TEST(SequenceBatchHoldTest, DirectWithoutDelayOrUtilizationNeverHolds) {
  EXPECT_EQ(Plan(Options("direct { }"), 1), std::make_pair(int64_t{-1}, 1));
  // A delay alone (minimum_slot_utilization 0) does not hold either, as Triton.
  EXPECT_EQ(Plan(Options("direct { max_queue_delay_microseconds: 500 }"), 1), std::make_pair(int64_t{-1}, 1));
  // Utilization without a delay: nothing to wait for.
  EXPECT_EQ(Plan(Options("direct { minimum_slot_utilization: 1 }"), 1), std::make_pair(int64_t{-1}, 1));
}

TEST(SequenceBatchHoldTest, DirectHoldsBelowTheUtilizationUntilTheDelayFromTheOldestArrival) {
  const SequenceBatchingOptions half =
      Options("direct { max_queue_delay_microseconds: 500 minimum_slot_utilization: 0.5 }");
  EXPECT_EQ(half.min_ready_rows, 2);
  EXPECT_EQ(Plan(half, 1, 100), std::make_pair(int64_t{500}, 0));
  EXPECT_EQ(Plan(half, 2), std::make_pair(int64_t{-1}, 2));       // half the 4 slots
  EXPECT_EQ(Plan(half, 1, 500), std::make_pair(int64_t{-1}, 1));  // the delay is spent
  const SequenceBatchingOptions full = Options("direct { max_queue_delay_microseconds: 500 minimum_slot_utilization: 1 }");
  EXPECT_EQ(full.min_ready_rows, 4);
  EXPECT_EQ(Plan(full, 3), std::make_pair(int64_t{500}, 0));
  EXPECT_EQ(Plan(full, 4), std::make_pair(int64_t{-1}, 4));
}

TEST(SequenceBatchHoldTest, OldestFollowsTheDynamicBatchersPreferredSizes) {
  const SequenceBatchingOptions preferred = Options(
      "oldest { max_candidate_sequences: 8 preferred_batch_size: [ 4, 2 ] max_queue_delay_microseconds: 300 }", 8);
  EXPECT_EQ(preferred.preferred_rows, (std::vector<int>{2, 4}));
  // Below the largest preferred size: held until the delay from the oldest arrival.
  EXPECT_EQ(Plan(preferred, 1), std::make_pair(int64_t{300}, 0));
  EXPECT_EQ(Plan(preferred, 3, 100), std::make_pair(int64_t{300}, 0));
  // The largest preferred size runs at once; more ready rows run as that size.
  EXPECT_EQ(Plan(preferred, 4), std::make_pair(int64_t{-1}, 4));
  EXPECT_EQ(Plan(preferred, 6), std::make_pair(int64_t{-1}, 4));
  // The delay spent: the largest preferred size that fits, or everything below the smallest.
  EXPECT_EQ(Plan(preferred, 3, 300), std::make_pair(int64_t{-1}, 2));
  EXPECT_EQ(Plan(preferred, 1, 300), std::make_pair(int64_t{-1}, 1));
  // No preferred sizes: a full batch (max_batch_size, at most max_candidate_sequences) or the delay.
  const SequenceBatchingOptions none =
      Options("oldest { max_candidate_sequences: 3 max_queue_delay_microseconds: 300 }", 8);
  EXPECT_EQ(Plan(none, 2), std::make_pair(int64_t{300}, 0));
  EXPECT_EQ(Plan(none, 3), std::make_pair(int64_t{-1}, 3));
  EXPECT_EQ(Plan(none, 2, 301), std::make_pair(int64_t{-1}, 2));
  // No delay: whatever is ready runs (a preferred size still caps it).
  EXPECT_EQ(Plan(Options("oldest { max_candidate_sequences: 3 }", 8), 1), std::make_pair(int64_t{-1}, 1));
  EXPECT_EQ(Plan(Options("oldest { max_candidate_sequences: 8 preferred_batch_size: [ 2 ] }", 8), 3),
            std::make_pair(int64_t{-1}, 2));
}

TEST(SequenceBatchHoldTest, UtilizationOutsideZeroToOneIsRefused) {
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'm' max_batch_size: 2 sequence_batching { direct { minimum_slot_utilization: 1.5 } }", &config));
  auto options = SequenceBatchingOptionsFromConfig(config, 16);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().message(),
            "sequence_batching.direct.minimum_slot_utilization: 1.5 must be 0 to 1");
}

}  // namespace
}  // namespace infera
