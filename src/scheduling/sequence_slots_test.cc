#include "scheduling/sequence_slots.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduling/scheduling_test_util.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Clock = SequenceSlots::Clock;
using std::chrono::microseconds;
using P = std::pair<int, std::string>;

class SequenceSlotsTest : public ::testing::Test {
 protected:
  // Admits request `name` of sequence `id`; returns the instance to wake (-1: backlog).
  absl::StatusOr<int> Admit(SequenceSlots& slots, const std::string& name, SequenceId id, bool start, bool end) {
    auto request = testing::MakeRequest(name, 1, outcomes_.Callback(name), 1);
    absl::StatusOr<int> admitted = slots.Admit(request, SequenceRequest{std::move(id), start, end}, now_);
    if (!admitted.ok()) {
      EXPECT_NE(request, nullptr) << "a refused request stays with the caller";
    }
    return admitted;
  }
  // (slot, request id) of the next batch of `instance`.
  std::vector<std::pair<int, std::string>> Batch(SequenceSlots& slots, int instance) {
    std::vector<std::pair<int, std::string>> taken;
    for (auto& row : slots.NextBatch(instance, now_, [](const ScheduledRequest&, const ScheduledRequest&) {
           return true;
         })) {
      taken.emplace_back(row.slot, row.pending.request->request.id);
    }
    return taken;
  }

  testing::Outcomes outcomes_;
  Clock::time_point now_ = Clock::time_point(std::chrono::seconds(100));
};

TEST_F(SequenceSlotsTest, SequencesTakeTheLowestFreeSlotSpreadOverInstances) {
  SequenceSlots slots("m", 2, 2, 100, microseconds(1000));
  EXPECT_EQ(*Admit(slots, "a1", uint64_t{1}, true, false), 0);
  EXPECT_EQ(*Admit(slots, "b1", std::string("b"), true, false), 1);
  EXPECT_EQ(*Admit(slots, "c1", uint64_t{3}, true, false), 0);
  EXPECT_EQ(*Admit(slots, "a2", uint64_t{1}, false, false), 0);
  EXPECT_EQ(slots.ActiveSequences(), 3u);
  // One request per slot per batch, in slot order: the sequence's second request waits.
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a1"}, P{1, "c1"}));
  EXPECT_THAT(Batch(slots, 1), ElementsAre(P{0, "b1"}));
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a2"}));
  EXPECT_TRUE(Batch(slots, 0).empty());
  EXPECT_EQ(slots.QueuedRequests(), 0u);
}

TEST_F(SequenceSlotsTest, RequestOfAnUnknownSequenceWithoutStartIsRefusedWithTritonsText) {
  SequenceSlots slots("m", 1, 1, 100, microseconds(1000));
  auto refused = Admit(slots, "x", uint64_t{7}, false, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "inference request for sequence 7 to model 'm' must specify the START flag on the first request of the "
            "sequence");
}

TEST_F(SequenceSlotsTest, EndReleasesTheSlotToTheOldestBacklogSequence) {
  SequenceSlots slots("m", 1, 1, 100, microseconds(1000));
  ASSERT_EQ(*Admit(slots, "a1", uint64_t{1}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "b1", uint64_t{2}, true, false), -1);  // every slot taken
  ASSERT_EQ(*Admit(slots, "c1", uint64_t{3}, true, false), -1);
  ASSERT_EQ(*Admit(slots, "b2", uint64_t{2}, false, true), -1);  // joins its backlogged sequence
  EXPECT_EQ(slots.BacklogSequences(), 2u);
  ASSERT_EQ(*Admit(slots, "a2", uint64_t{1}, false, true), 0);
  // After END an id needs START again, even before the END ran.
  EXPECT_FALSE(Admit(slots, "a3", uint64_t{1}, false, false).ok());
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a1"}));
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a2"}));  // END: slot to sequence 2
  EXPECT_EQ(slots.BacklogSequences(), 1u);
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "b1"}));
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "b2"}));
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "c1"}));
  EXPECT_EQ(slots.BacklogSequences(), 0u);
  EXPECT_EQ(slots.ActiveSequences(), 1u);
}

TEST_F(SequenceSlotsTest, StartOnAnActiveIdRestartsInTheSameSlot) {
  SequenceSlots slots("m", 1, 2, 100, microseconds(1000));
  ASSERT_EQ(*Admit(slots, "a1", uint64_t{1}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "b1", uint64_t{2}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "a1again", uint64_t{1}, true, false), 0);
  EXPECT_EQ(slots.ActiveSequences(), 2u);
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a1"}, P{1, "b1"}));
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a1again"}));
}

TEST_F(SequenceSlotsTest, IdleSequenceReleasesItsSlotAfterTheIdleTimeOnly) {
  SequenceSlots slots("m", 1, 1, 100, microseconds(1000));
  ASSERT_EQ(*Admit(slots, "a1", uint64_t{1}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "b1", uint64_t{2}, true, false), -1);
  EXPECT_EQ(slots.NextIdleDeadline(), std::nullopt) << "a slot with a queued request is never idle";
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a1"}));
  // Idle from the time its last request was taken.
  EXPECT_EQ(slots.NextIdleDeadline(), now_ + microseconds(1000));
  EXPECT_TRUE(slots.ReleaseIdle(now_ + microseconds(999)).empty());
  EXPECT_EQ(slots.ActiveSequences(), 1u);
  EXPECT_THAT(slots.ReleaseIdle(now_ + microseconds(1000)), ElementsAre(0));  // backlog got it
  EXPECT_EQ(slots.ActiveSequences(), 1u);
  EXPECT_EQ(slots.BacklogSequences(), 0u);
  // The timed-out sequence is unknown now: without START it is refused.
  EXPECT_FALSE(Admit(slots, "a2", uint64_t{1}, false, false).ok());
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "b1"}));
}

TEST_F(SequenceSlotsTest, BacklogIsBoundedAndRefusesWithResourceExhausted) {
  SequenceSlots slots("m", 1, 2, 3, microseconds(1000));
  int refused = 0;
  for (uint64_t id = 1; id <= 10'000; ++id) {
    auto admitted = Admit(slots, "r" + std::to_string(id), id, true, false);
    if (!admitted.ok()) {
      EXPECT_EQ(admitted.status().code(), absl::StatusCode::kResourceExhausted);
      EXPECT_THAT(admitted.status().message(), HasSubstr("sequence backlog of model 'm' is full"));
      ++refused;
    }
  }
  EXPECT_EQ(refused, 10'000 - 2 - 3);
  EXPECT_EQ(slots.ActiveSequences(), 2u);
  EXPECT_EQ(slots.BacklogSequences(), 3u);
  EXPECT_EQ(slots.QueuedRequests(), 5u);
  EXPECT_EQ(slots.TakeAll().size(), 5u);
  EXPECT_EQ(slots.QueuedRequests(), 0u);
  EXPECT_EQ(slots.ActiveSequences(), 0u);
}

TEST_F(SequenceSlotsTest, SingleRequestSequenceFreesItsSlotWhenTaken) {
  SequenceSlots slots("m", 1, 1, 100, microseconds(1000));
  ASSERT_EQ(*Admit(slots, "a", uint64_t{1}, true, true), 0);
  EXPECT_EQ(slots.ActiveSequences(), 0u);  // no id binding: it ended at admission
  ASSERT_EQ(*Admit(slots, "b", uint64_t{2}, true, false), -1);
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a"}));
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "b"}));
}

TEST_F(SequenceSlotsTest, OldestStrategyTakesTheOldestSequencesUpToTheBatchSize) {
  SequenceSlots slots("m", 1, 3, 100, microseconds(1000), /*oldest_first=*/true, /*max_rows=*/2);
  ASSERT_EQ(*Admit(slots, "a1", uint64_t{1}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "b1", uint64_t{2}, true, true), 0);
  ASSERT_EQ(*Admit(slots, "c1", uint64_t{3}, true, false), 0);
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a1"}, P{1, "b1"}));
  // Slot 1 is free again; the newest sequence takes it but is still younger than slot 2's.
  ASSERT_EQ(*Admit(slots, "d1", uint64_t{4}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "a2", uint64_t{1}, false, false), 0);
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{0, "a2"}, P{2, "c1"}));
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{1, "d1"}));
}

TEST_F(SequenceSlotsTest, IncompatibleRequestsWaitForTheNextBatch) {
  SequenceSlots slots("m", 1, 2, 100, microseconds(1000));
  ASSERT_EQ(*Admit(slots, "a1", uint64_t{1}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "b1", uint64_t{2}, true, false), 0);
  auto first_only = [](const ScheduledRequest&, const ScheduledRequest&) { return false; };
  auto rows = slots.NextBatch(0, now_, first_only);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].pending.request->request.id, "a1");
  EXPECT_THAT(Batch(slots, 0), ElementsAre(P{1, "b1"}));
}

TEST_F(SequenceSlotsTest, ReadyRowsCountsTheOldestArrivalAndARowLimitCapsTheBatch) {
  SequenceSlots slots("m", 1, 3, 100, microseconds(1000), /*oldest_first=*/true, /*max_rows=*/3);
  EXPECT_EQ(slots.ReadyRows(0).rows, 0);
  ASSERT_EQ(*Admit(slots, "a1", uint64_t{1}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "b1", uint64_t{2}, true, false), 0);
  ASSERT_EQ(*Admit(slots, "c1", uint64_t{3}, true, false), 0);
  const SequenceSlots::Readiness ready = slots.ReadyRows(0);
  EXPECT_EQ(ready.rows, 3);
  EXPECT_EQ(ready.oldest_arrival, Clock::time_point{}) << "MakeRequest leaves enqueue_time at the epoch";
  auto rows = slots.NextBatch(0, now_, [](const ScheduledRequest&, const ScheduledRequest&) { return true; }, 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].pending.request->request.id, "a1");
  EXPECT_EQ(rows[1].pending.request->request.id, "b1");
  EXPECT_EQ(slots.ReadyRows(0).rows, 1);
}

}  // namespace
}  // namespace infera
