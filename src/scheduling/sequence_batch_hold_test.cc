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

TEST(SequenceBatchHoldTest, DirectWithoutDelayOrUtilizationNeverHolds) {
  EXPECT_FALSE(SequenceBatchHoldUntil(Options("direct { }"), 1, kArrival, kArrival));
  // A delay alone (minimum_slot_utilization 0) does not hold either, as Triton.
  EXPECT_FALSE(SequenceBatchHoldUntil(Options("direct { max_queue_delay_microseconds: 500 }"), 1, kArrival, kArrival));
  // Utilization without a delay: nothing to wait for.
  EXPECT_FALSE(SequenceBatchHoldUntil(Options("direct { minimum_slot_utilization: 1 }"), 1, kArrival, kArrival));
}

TEST(SequenceBatchHoldTest, DirectHoldsBelowTheUtilizationUntilTheDelayFromTheOldestArrival) {
  const SequenceBatchingOptions half =
      Options("direct { max_queue_delay_microseconds: 500 minimum_slot_utilization: 0.5 }");
  EXPECT_EQ(half.min_ready_rows, 2);
  EXPECT_EQ(SequenceBatchHoldUntil(half, 1, kArrival, kArrival + microseconds(100)), kArrival + microseconds(500));
  EXPECT_FALSE(SequenceBatchHoldUntil(half, 2, kArrival, kArrival));  // half the 4 slots
  EXPECT_FALSE(SequenceBatchHoldUntil(half, 1, kArrival, kArrival + microseconds(500)));  // delay spent
  const SequenceBatchingOptions full = Options("direct { max_queue_delay_microseconds: 500 minimum_slot_utilization: 1 }");
  EXPECT_EQ(full.min_ready_rows, 4);
  EXPECT_TRUE(SequenceBatchHoldUntil(full, 3, kArrival, kArrival));
  EXPECT_FALSE(SequenceBatchHoldUntil(full, 4, kArrival, kArrival));
}

TEST(SequenceBatchHoldTest, OldestHoldsForAPreferredSizeOrAFullBatch) {
  const SequenceBatchingOptions preferred = Options(
      "oldest { max_candidate_sequences: 8 preferred_batch_size: [ 4, 2 ] max_queue_delay_microseconds: 300 }", 8);
  EXPECT_EQ(preferred.preferred_rows, (std::vector<int>{2, 4}));
  EXPECT_EQ(SequenceBatchHoldUntil(preferred, 1, kArrival, kArrival), kArrival + microseconds(300));
  EXPECT_FALSE(SequenceBatchHoldUntil(preferred, 2, kArrival, kArrival));
  EXPECT_TRUE(SequenceBatchHoldUntil(preferred, 3, kArrival, kArrival));
  EXPECT_FALSE(SequenceBatchHoldUntil(preferred, 4, kArrival, kArrival));
  EXPECT_FALSE(SequenceBatchHoldUntil(preferred, 5, kArrival, kArrival));  // above the largest preferred
  EXPECT_FALSE(SequenceBatchHoldUntil(preferred, 3, kArrival, kArrival + microseconds(301)));
  // No preferred sizes: a full batch (max_batch_size, at most max_candidate_sequences) or the delay.
  const SequenceBatchingOptions none =
      Options("oldest { max_candidate_sequences: 3 max_queue_delay_microseconds: 300 }", 8);
  EXPECT_TRUE(SequenceBatchHoldUntil(none, 2, kArrival, kArrival));
  EXPECT_FALSE(SequenceBatchHoldUntil(none, 3, kArrival, kArrival));
  EXPECT_FALSE(SequenceBatchHoldUntil(Options("oldest { max_candidate_sequences: 3 }", 8), 1, kArrival, kArrival));
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
