#include "scheduling/sequence_batcher.h"

#include <cstring>

#include "absl/synchronization/notification.h"
#include "common/retry_after.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduling/scheduling_test_util.h"

namespace infera {
namespace {

using ::infera::testing::MakeRequest;
using ::infera::testing::Outcomes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FakeInstance : public ModelInstance {
 public:
  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor>, const ExecutionContext&) override {
    return std::vector<Tensor>{};
  }
};

// What the model would see of one row: its request, whether it is padding, its controls.
struct SeenRow {
  std::string id;
  bool padding = false;
  int32_t start = -1, ready = -1, end = -1;
  uint64_t corrid = 0;
  Shape control_shape;
};

int32_t Int32Of(const Tensor& t) {
  int32_t v;
  std::memcpy(&v, t.data.data(), 4);
  return v;
}

// Records every batch and can hold the first one until released.
class Recorder {
 public:
  BatchRunner Runner() {
    return [this](ModelInstance&, ScheduledRequests requests, CompletionBatch&) {
      std::vector<SeenRow> rows;
      for (auto& r : requests) {
        SeenRow row;
        row.id = r->request.id;
        row.padding = r->padding;
        for (const Tensor& t : r->request.inputs) {
          if (t.name == "START") row.start = Int32Of(t);
          if (t.name == "READY") row.ready = Int32Of(t);
          if (t.name == "END") row.end = Int32Of(t);
          if (t.name == "CORRID") std::memcpy(&row.corrid, t.data.data(), 8);
          if (t.name == "READY") row.control_shape = t.shape;
        }
        rows.push_back(row);
      }
      {
        absl::MutexLock lock(&mu_);
        batches_.push_back(rows);
      }
      if (hold_first_ && !released_.HasBeenNotified()) {
        started_.Notify();
        released_.WaitForNotification();
      }
      for (auto& r : requests) r->callback(InferResponse{}, ResponseDelivery{});
    };
  }
  void HoldFirst() { hold_first_ = true; }
  void WaitStarted() { started_.WaitForNotification(); }
  void Release() { released_.Notify(); }
  std::vector<std::vector<SeenRow>> batches() {
    absl::MutexLock lock(&mu_);
    return batches_;
  }
  std::vector<std::vector<std::string>> ids() {
    std::vector<std::vector<std::string>> all;
    for (const auto& batch : batches()) {
      all.emplace_back();
      for (const SeenRow& row : batch) all.back().push_back(row.padding ? "-" : row.id);
    }
    return all;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::vector<SeenRow>> batches_;
  bool hold_first_ = false;
  absl::Notification started_, released_;
};

SequenceBatchingOptions Options(int slots, bool batched = true) {
  SequenceBatchingOptions options;
  options.model_name = "m";
  options.slots_per_instance = slots;
  options.max_batch_rows = slots;
  options.batched = batched;
  options.max_backlog_requests = 2;
  options.max_idle = std::chrono::hours(1);
  for (auto [kind, name] : {std::pair{SequenceControl::Kind::kStart, "START"},
                            std::pair{SequenceControl::Kind::kReady, "READY"},
                            std::pair{SequenceControl::Kind::kEnd, "END"}}) {
    options.controls.push_back(SequenceControl{kind, name, DataType::kInt32, 0, 1});
  }
  options.controls.push_back(SequenceControl{SequenceControl::Kind::kCorrelationId, "CORRID", DataType::kUint64});
  options.correlation_id_dtype = DataType::kUint64;
  return options;
}

std::vector<std::unique_ptr<ModelInstance>> OneInstance() {
  std::vector<std::unique_ptr<ModelInstance>> instances;
  instances.push_back(std::make_unique<FakeInstance>());
  return instances;
}

Parameters Seq(ParameterValue id, bool start = false, bool end = false) {
  Parameters p{{"sequence_id", std::move(id)}};
  if (start) p["sequence_start"] = true;
  if (end) p["sequence_end"] = true;
  return p;
}

TEST(SequenceBatcherTest, RowsAreSlotsWithControlsAndIdleSlotsArePadded) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  SequenceBatcher batcher(Options(3), OneInstance(), recorder.Runner());
  batcher.Enqueue(MakeRequest("a1", 1, outcomes.Callback("a1"), 1, Seq(int64_t{5}, true)));
  recorder.WaitStarted();  // a1 holds the instance: the others queue in their slots
  batcher.Enqueue(MakeRequest("b1", 1, outcomes.Callback("b1"), 1, Seq(int64_t{6}, true)));
  batcher.Enqueue(MakeRequest("c1", 1, outcomes.Callback("c1"), 1, Seq(int64_t{7}, true, true)));
  recorder.Release();
  ASSERT_TRUE(outcomes.AwaitSize(3));
  batcher.Shutdown();
  ASSERT_EQ(recorder.ids(), (std::vector<std::vector<std::string>>{{"a1"}, {"-", "b1", "c1"}}));
  const auto batches = recorder.batches();
  const SeenRow& a1 = batches[0][0];
  EXPECT_EQ(std::tie(a1.start, a1.ready, a1.end, a1.corrid), std::make_tuple(1, 1, 0, uint64_t{5}));
  EXPECT_EQ(a1.control_shape, (Shape{1, 1}));
  const SeenRow& padding = batches[1][0];
  EXPECT_EQ(std::tie(padding.start, padding.ready, padding.end, padding.corrid), std::make_tuple(0, 0, 0, uint64_t{0}));
  const SeenRow& c1 = batches[1][2];
  EXPECT_EQ(std::tie(c1.start, c1.ready, c1.end, c1.corrid), std::make_tuple(1, 1, 1, uint64_t{7}));
}

TEST(SequenceBatcherTest, RequestsOfOneSequenceRunInOrderOnePerBatch) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  SequenceBatcher batcher(Options(2, /*batched=*/false), OneInstance(), recorder.Runner());
  batcher.Enqueue(MakeRequest("a1", 1, outcomes.Callback("a1"), 1, Seq(int64_t{1}, true)));
  recorder.WaitStarted();
  batcher.Enqueue(MakeRequest("a2", 1, outcomes.Callback("a2"), 1, Seq(int64_t{1})));
  batcher.Enqueue(MakeRequest("a3", 1, outcomes.Callback("a3"), 1, Seq(int64_t{1}, false, true)));
  recorder.Release();
  ASSERT_TRUE(outcomes.AwaitSize(3));
  batcher.Shutdown();
  EXPECT_THAT(outcomes.order(), ElementsAre("a1", "a2", "a3"));
  EXPECT_EQ(recorder.ids(), (std::vector<std::vector<std::string>>{{"a1"}, {"a2"}, {"a3"}}));
  EXPECT_EQ(recorder.batches()[1][0].control_shape, (Shape{1})) << "no batch dimension";
}

TEST(SequenceBatcherTest, RefusesBadRequestsBeforeQueueingThem) {
  Recorder recorder;
  Outcomes outcomes;
  SequenceBatcher batcher(Options(2), OneInstance(), recorder.Runner());
  batcher.Enqueue(MakeRequest("none", 1, outcomes.Callback("none"), 1));
  batcher.Enqueue(MakeRequest("rows", 2, outcomes.Callback("rows"), 1, Seq(int64_t{1}, true)));
  batcher.Enqueue(MakeRequest("nostart", 1, outcomes.Callback("nostart"), 1, Seq(int64_t{9})));
  batcher.Enqueue(MakeRequest("string", 1, outcomes.Callback("string"), 1, Seq(std::string("s"), true)));
  ASSERT_EQ(outcomes.size(), 4u) << "every refusal is answered before Enqueue returns";
  EXPECT_EQ(outcomes.status_of("none").message(),
            "inference request to model 'm' must specify a non-zero or non-empty correlation ID");
  EXPECT_EQ(outcomes.status_of("rows").message(),
            "inference request to model 'm' must specify batch-size 1 due to requirements of sequence batcher");
  EXPECT_THAT(outcomes.status_of("nostart").message(), HasSubstr("must specify the START flag"));
  EXPECT_EQ(outcomes.status_of("string").message(),
            "sequence batching control 'CORRID' data-type is 'BYTES', but model 'm' expects 'UINT64'");
  batcher.Shutdown();
  EXPECT_TRUE(recorder.batches().empty());
}

TEST(SequenceBatcherTest, FullBacklogAnswersResourceExhaustedAndShutdownDrainsTheRest) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  SequenceBatcher batcher(Options(1), OneInstance(), recorder.Runner());
  batcher.Enqueue(MakeRequest("a1", 1, outcomes.Callback("a1"), 1, Seq(int64_t{1}, true)));
  recorder.WaitStarted();
  for (int i = 2; i <= 5; ++i) {
    const std::string id = "s" + std::to_string(i);
    batcher.Enqueue(MakeRequest(id, 1, outcomes.Callback(id), 1, Seq(int64_t{i}, true)));
  }
  EXPECT_EQ(batcher.BacklogSequences(), 2u);
  EXPECT_EQ(outcomes.status_of("s4").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(outcomes.status_of("s5").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RetryAfterSeconds(outcomes.status_of("s4")), 60) << "the idle time (1 h), capped";
  recorder.Release();
  // Sequence 1 never ends: stopping releases its slot at once, so the backlog runs.
  batcher.Shutdown();
  EXPECT_TRUE(outcomes.status_of("s2").ok());
  EXPECT_TRUE(outcomes.status_of("s3").ok());
  Outcomes late;
  batcher.Enqueue(MakeRequest("late", 1, late.Callback("late"), 1, Seq(int64_t{8}, true)));
  EXPECT_EQ(late.status_of("late").code(), absl::StatusCode::kUnavailable);
}

TEST(SequenceBatcherTest, CancelledRequestIsAnsweredAndItsRowPadded) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  SequenceBatcher batcher(Options(2), OneInstance(), recorder.Runner());
  batcher.Enqueue(MakeRequest("a1", 1, outcomes.Callback("a1"), 1, Seq(int64_t{1}, true)));
  recorder.WaitStarted();
  auto token = std::make_shared<CancellationToken>();
  auto cancelled = MakeRequest("a2", 1, outcomes.Callback("a2"), 1, Seq(int64_t{1}));
  cancelled->request.cancellation = token;
  batcher.Enqueue(std::move(cancelled));
  batcher.Enqueue(MakeRequest("b1", 1, outcomes.Callback("b1"), 1, Seq(int64_t{2}, true)));
  token->Cancel();
  recorder.Release();
  ASSERT_TRUE(outcomes.AwaitSize(3));
  batcher.Shutdown();
  EXPECT_EQ(outcomes.status_of("a2").code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(recorder.ids(), (std::vector<std::vector<std::string>>{{"a1"}, {"-", "b1"}}));
}

// Direct with minimum_slot_utilization 1: the first sequences' requests wait (past the
// moment they could run) until every slot is ready, then run as one full batch.
TEST(SequenceBatcherTest, DirectHoldsRowsUntilTheMinimumSlotUtilization) {
  Recorder recorder;
  Outcomes outcomes;
  SequenceBatchingOptions options = Options(3);
  options.max_queue_delay = std::chrono::hours(1);
  options.min_ready_rows = 3;
  SequenceBatcher batcher(options, OneInstance(), recorder.Runner());
  batcher.Enqueue(MakeRequest("a1", 1, outcomes.Callback("a1"), 1, Seq(int64_t{1}, true)));
  batcher.Enqueue(MakeRequest("b1", 1, outcomes.Callback("b1"), 1, Seq(int64_t{2}, true)));
  EXPECT_FALSE(outcomes.AwaitSize(1, absl::Milliseconds(50))) << "two of three slots ready: held";
  batcher.Enqueue(MakeRequest("c1", 1, outcomes.Callback("c1"), 1, Seq(int64_t{3}, true)));
  ASSERT_TRUE(outcomes.AwaitSize(3));
  batcher.Shutdown();
  EXPECT_EQ(recorder.ids(), (std::vector<std::vector<std::string>>{{"a1", "b1", "c1"}}));
}

// The hold never outlasts max_queue_delay from the oldest ready request's arrival.
TEST(SequenceBatcherTest, HeldRowsRunWhenTheQueueDelayExpires) {
  Recorder recorder;
  Outcomes outcomes;
  SequenceBatchingOptions options = Options(4);
  options.max_queue_delay = std::chrono::milliseconds(80);
  options.min_ready_rows = 4;
  SequenceBatcher batcher(options, OneInstance(), recorder.Runner());
  const absl::Time sent = absl::Now();
  batcher.Enqueue(MakeRequest("a1", 1, outcomes.Callback("a1"), 1, Seq(int64_t{1}, true)));
  ASSERT_TRUE(outcomes.AwaitSize(1));
  const absl::Duration waited = absl::Now() - sent;
  EXPECT_GE(waited, absl::Milliseconds(80));
  EXPECT_LT(waited, absl::Seconds(5));
  batcher.Shutdown();
  EXPECT_EQ(recorder.ids(), (std::vector<std::vector<std::string>>{{"a1"}}));
}

// Oldest: a batch waits for its preferred size and takes no more; stopping runs what is
// held at once.
TEST(SequenceBatcherTest, OldestHoldsForAPreferredBatchSizeAndShutdownRunsHeldRows) {
  Recorder recorder;
  Outcomes outcomes;
  SequenceBatchingOptions options = Options(4);
  options.strategy = SequenceBatchingOptions::Strategy::kOldest;
  options.max_queue_delay = std::chrono::hours(1);
  options.preferred_rows = {2};
  options.max_backlog_requests = 8;
  SequenceBatcher batcher(options, OneInstance(), recorder.Runner());
  batcher.Enqueue(MakeRequest("a1", 1, outcomes.Callback("a1"), 1, Seq(int64_t{1}, true)));
  EXPECT_FALSE(outcomes.AwaitSize(1, absl::Milliseconds(50))) << "one ready sequence: held for a second";
  batcher.Enqueue(MakeRequest("b1", 1, outcomes.Callback("b1"), 1, Seq(int64_t{2}, true)));
  ASSERT_TRUE(outcomes.AwaitSize(2));
  batcher.Enqueue(MakeRequest("c1", 1, outcomes.Callback("c1"), 1, Seq(int64_t{3}, true)));
  batcher.Shutdown();  // c1 alone would wait an hour; stopping runs it now
  EXPECT_TRUE(outcomes.status_of("c1").ok());
  EXPECT_EQ(recorder.ids(), (std::vector<std::vector<std::string>>{{"a1", "b1"}, {"c1"}}));
}

}  // namespace
}  // namespace infera
