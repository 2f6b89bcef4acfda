#include "scheduling/dynamic_batcher.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "common/retry_after.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduling/scheduling_test_util.h"

namespace infera {
namespace {

using ::infera::testing::MakeRequest;
using ::infera::testing::Outcomes;
using ::testing::ElementsAre;

class FakeInstance : public ModelInstance {
 public:
  explicit FakeInstance(int id) : id(id) {}
  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor>, const ExecutionContext&) override {
    return std::vector<Tensor>{};
  }
  const int id;
};

std::vector<std::unique_ptr<ModelInstance>> Instances(int n) {
  std::vector<std::unique_ptr<ModelInstance>> instances;
  for (int i = 0; i < n; ++i) instances.push_back(std::make_unique<FakeInstance>(i));
  return instances;
}

// Records every batch (ids per execution) and can hold the first execution of each
// instance until released, so tests control what is queued while instances are busy.
class Recorder {
 public:
  BatchRunner Runner() {
    return [this](ModelInstance& instance, ScheduledRequests requests, CompletionBatch&) {
      std::vector<std::string> ids;
      for (auto& r : requests) ids.push_back(r->request.id);
      {
        absl::MutexLock lock(&mu_);
        batches_.push_back(ids);
        instances_.insert(static_cast<FakeInstance&>(instance).id);
        ++running_;
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
  std::vector<std::vector<std::string>> batches() {
    absl::MutexLock lock(&mu_);
    return batches_;
  }
  std::set<int> instances() {
    absl::MutexLock lock(&mu_);
    return instances_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::vector<std::string>> batches_;
  std::set<int> instances_;
  int running_ = 0;
  bool hold_first_ = false;
  absl::Notification started_, released_;
};

SchedulingOptions BatchingOptions(int64_t max_rows, size_t max_queue = 100) {
  SchedulingOptions options;
  options.model_name = "m";
  options.batching = true;
  options.max_batch_rows = max_rows;
  QueuePolicy policy;
  policy.max_queue_size = max_queue;
  policy.allow_timeout_override = true;
  options.policies = {policy, policy};
  options.default_priority_level = 2;
  return options;
}

TEST(DynamicBatcherTest, RequestsQueuedWhileBusyRunAsBatchesUpToMaxRows) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  {
    DynamicBatcher batcher(BatchingOptions(4), Instances(1), recorder.Runner());
    batcher.Enqueue(MakeRequest("first", 1, outcomes.Callback("first")));
    recorder.WaitStarted();
    for (const char* id : {"a", "b", "c", "d", "e", "f"}) batcher.Enqueue(MakeRequest(id, 1, outcomes.Callback(id)));
    EXPECT_EQ(batcher.QueueDepth(), 6u);
    recorder.Release();
  }  // destructor drains
  EXPECT_THAT(recorder.batches(),
              ElementsAre(ElementsAre("first"), ElementsAre("a", "b", "c", "d"), ElementsAre("e", "f")));
  EXPECT_EQ(outcomes.size(), 7u);
}

// Waits (bounded) until `done` holds; false if it never did within 10 s.
template <typename Fn>
bool Eventually(Fn done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(DynamicBatcherTest, AFillingBatchWakesItsWorkerOnceNotPerArrival) {
  SchedulingOptions options = BatchingOptions(8);
  options.max_queue_delay = std::chrono::hours(1);  // only a full batch runs
  Recorder recorder;
  Outcomes outcomes;
  DynamicBatcher batcher(options, Instances(1), recorder.Runner());
  ASSERT_TRUE(Eventually([&] { return batcher.WaitingWorkers().idle == 1; }));
  for (int i = 0; i < 7; ++i) {
    const std::string id = StrCat("r", i);
    batcher.Enqueue(MakeRequest(id, 1, outcomes.Callback(id)));
    // The worker waits on the batch's timer (armed after the first arrival woke it).
    ASSERT_TRUE(Eventually([&] { return batcher.WaitingWorkers().timed == 1; }));
  }
  // Only the first arrival woke it: the next six cannot change its decision.
  EXPECT_EQ(batcher.ArrivalWakeUps(), 1u);
  EXPECT_EQ(batcher.QueueDepth(), 7u);
  batcher.Enqueue(MakeRequest("r7", 1, outcomes.Callback("r7")));  // the batch is full
  ASSERT_TRUE(Eventually([&] { return outcomes.size() == 8; }));
  EXPECT_THAT(recorder.batches(), ElementsAre(ElementsAre("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7")));
  // The first arrival woke the idle worker (it armed the timer), the eighth filled the
  // batch: 2 (one per arrival would be 8).
  EXPECT_EQ(batcher.ArrivalWakeUps(), 2u);
}

TEST(DynamicBatcherTest, AnArrivalWithAnEarlierDeadlineWakesATimedWorker) {
  SchedulingOptions options = BatchingOptions(8);
  options.max_queue_delay = std::chrono::hours(1);
  Recorder recorder;
  Outcomes outcomes;
  FakeClock clock;
  DynamicBatcher batcher(options, Instances(1), recorder.Runner(), &clock);
  batcher.Enqueue(MakeRequest("patient", 1, outcomes.Callback("patient")));
  ASSERT_TRUE(Eventually([&] { return batcher.WaitingWorkers().timed == 1; }));
  // Its timer fires in an hour; this request must be expired long before.
  const uint64_t wakeups = batcher.ArrivalWakeUps();
  batcher.Enqueue(MakeRequest("hurry", 1, outcomes.Callback("hurry"), 2, {{"timeout", int64_t{1000}}}));
  EXPECT_EQ(batcher.ArrivalWakeUps(), wakeups + 1);
  clock.Advance(std::chrono::milliseconds(2));
  ASSERT_TRUE(Eventually([&] { return outcomes.size() == 1; }));
  EXPECT_EQ(outcomes.status_of("hurry").code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(batcher.QueueDepth(), 1u);  // "patient" still waits for its batch
  batcher.Shutdown();                   // runs it without delay
  EXPECT_TRUE(outcomes.status_of("patient").ok());
}

TEST(DynamicBatcherTest, AHigherPriorityArrivalWakesATimedWorker) {
  SchedulingOptions options = BatchingOptions(8);  // levels 1 and 2 (the default)
  options.max_queue_delay = std::chrono::hours(1);
  Recorder recorder;
  Outcomes outcomes;
  DynamicBatcher batcher(options, Instances(1), recorder.Runner());
  batcher.Enqueue(MakeRequest("low", 1, outcomes.Callback("low")));
  ASSERT_TRUE(Eventually([&] { return batcher.WaitingWorkers().timed == 1; }));
  const uint64_t wakeups = batcher.ArrivalWakeUps();
  batcher.Enqueue(MakeRequest("low2", 1, outcomes.Callback("low2")));
  EXPECT_EQ(batcher.ArrivalWakeUps(), wakeups);  // same batch: no decision changes
  // A new head (its batch has its own delay): the worker must look again.
  batcher.Enqueue(MakeRequest("high", 1, outcomes.Callback("high"), 2, {{"priority", int64_t{1}}}));
  EXPECT_EQ(batcher.ArrivalWakeUps(), wakeups + 1);
  batcher.Shutdown();
  EXPECT_EQ(outcomes.size(), 3u);
}

TEST(DynamicBatcherTest, ShutdownEndsABatchWaitingOnItsTimer) {
  SchedulingOptions options = BatchingOptions(8);
  options.max_queue_delay = std::chrono::hours(1);
  Recorder recorder;
  Outcomes outcomes;
  DynamicBatcher batcher(options, Instances(2), recorder.Runner());
  batcher.Enqueue(MakeRequest("a", 1, outcomes.Callback("a")));
  batcher.Enqueue(MakeRequest("b", 1, outcomes.Callback("b")));
  ASSERT_TRUE(Eventually([&] { return batcher.WaitingWorkers().timed >= 1; }));
  batcher.Shutdown();
  EXPECT_THAT(recorder.batches(), ElementsAre(ElementsAre("a", "b")));
  EXPECT_EQ(outcomes.size(), 2u);
}

TEST(DynamicBatcherTest, MultiRowRequestsAreNeverSplitAndShapesNeverMixed) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  {
    DynamicBatcher batcher(BatchingOptions(4), Instances(1), recorder.Runner());
    batcher.Enqueue(MakeRequest("first", 1, outcomes.Callback("first")));
    recorder.WaitStarted();
    batcher.Enqueue(MakeRequest("three", 3, outcomes.Callback("three")));
    batcher.Enqueue(MakeRequest("two", 2, outcomes.Callback("two")));        // 3+2 > 4
    batcher.Enqueue(MakeRequest("wide", 1, outcomes.Callback("wide"), 9));  // other shape
    batcher.Enqueue(MakeRequest("one", 1, outcomes.Callback("one")));
    recorder.Release();
  }
  EXPECT_THAT(recorder.batches(), ElementsAre(ElementsAre("first"), ElementsAre("three", "one"),
                                              ElementsAre("two"), ElementsAre("wide")));
}

TEST(DynamicBatcherTest, HigherPriorityRunsFirst) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  SchedulingOptions options = BatchingOptions(4);
  options.batching = false;  // one request per execution: order is visible
  options.max_batch_rows = 0;
  {
    DynamicBatcher batcher(options, Instances(1), recorder.Runner());
    batcher.Enqueue(MakeRequest("first", 1, outcomes.Callback("first")));
    recorder.WaitStarted();
    batcher.Enqueue(MakeRequest("low", 1, outcomes.Callback("low")));
    batcher.Enqueue(MakeRequest("high", 1, outcomes.Callback("high"), 2, {{"priority", int64_t{1}}}));
    recorder.Release();
  }
  EXPECT_THAT(outcomes.order(), ElementsAre("first", "high", "low"));
}

TEST(DynamicBatcherTest, FullQueueRejectsAtOnceWithRetryAfter) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  {
    DynamicBatcher batcher(BatchingOptions(4, 2), Instances(1), recorder.Runner());
    batcher.Enqueue(MakeRequest("first", 1, outcomes.Callback("first")));
    recorder.WaitStarted();
    batcher.Enqueue(MakeRequest("a", 1, outcomes.Callback("a")));
    batcher.Enqueue(MakeRequest("b", 1, outcomes.Callback("b")));
    batcher.Enqueue(MakeRequest("c", 1, outcomes.Callback("c")));  // rejected before Enqueue returns
    const absl::Status rejected = outcomes.status_of("c");
    EXPECT_EQ(rejected.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_TRUE(RetryAfterSeconds(rejected).has_value());
    recorder.Release();
  }
  EXPECT_TRUE(outcomes.status_of("a").ok());
  EXPECT_TRUE(outcomes.status_of("b").ok());
  EXPECT_EQ(recorder.batches().size(), 2u);  // "c" never ran
}

TEST(DynamicBatcherTest, CancelledRequestIsDroppedBeforeCompute) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  auto token = std::make_shared<CancellationToken>();
  {
    DynamicBatcher batcher(BatchingOptions(4), Instances(1), recorder.Runner());
    batcher.Enqueue(MakeRequest("first", 1, outcomes.Callback("first")));
    recorder.WaitStarted();
    auto request = MakeRequest("gone", 1, outcomes.Callback("gone"));
    request->request.cancellation = token;
    batcher.Enqueue(std::move(request));
    batcher.Enqueue(MakeRequest("kept", 1, outcomes.Callback("kept")));
    token->Cancel();
    recorder.Release();
  }
  EXPECT_EQ(outcomes.status_of("gone").code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(recorder.batches(), ElementsAre(ElementsAre("first"), ElementsAre("kept")));
}

TEST(DynamicBatcherTest, ExpiredRequestIsRejectedNotRun) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  FakeClock clock;
  {
    DynamicBatcher batcher(BatchingOptions(4), Instances(1), recorder.Runner(), &clock);
    batcher.Enqueue(MakeRequest("first", 1, outcomes.Callback("first")));
    recorder.WaitStarted();
    batcher.Enqueue(MakeRequest("hurry", 1, outcomes.Callback("hurry"), 2, {{"timeout", int64_t{100}}}));
    batcher.Enqueue(MakeRequest("patient", 1, outcomes.Callback("patient")));
    clock.Advance(std::chrono::milliseconds(1));
    recorder.Release();
  }
  EXPECT_EQ(outcomes.status_of("hurry").code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(outcomes.status_of("patient").ok());
  EXPECT_THAT(recorder.batches(), ElementsAre(ElementsAre("first"), ElementsAre("patient")));
}

TEST(DynamicBatcherTest, PreserveOrderingHoldsEarlyResults) {
  // Instance 0 holds "slow"; instance 1 finishes "fast" first, but "fast" must be
  // delivered after "slow".
  absl::Notification slow_started, release_slow;
  Outcomes outcomes;
  SchedulingOptions options = BatchingOptions(1);
  options.preserve_ordering = true;
  BatchRunner runner = [&](ModelInstance&, ScheduledRequests requests, CompletionBatch&) {
    if (requests[0]->request.id == "slow") {
      slow_started.Notify();
      release_slow.WaitForNotification();
    }
    for (auto& r : requests) r->callback(InferResponse{}, ResponseDelivery{});
  };
  {
    DynamicBatcher batcher(options, Instances(2), std::move(runner));
    batcher.Enqueue(MakeRequest("slow", 1, outcomes.Callback("slow")));
    slow_started.WaitForNotification();
    absl::Notification fast_done;
    batcher.Enqueue(MakeRequest("fast", 1, [&](absl::StatusOr<InferResponse> r, ResponseDelivery) {
      outcomes.Callback("fast")(std::move(r), ResponseDelivery{});
      fast_done.Notify();
    }));
    EXPECT_FALSE(fast_done.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
    EXPECT_EQ(outcomes.size(), 0u);
    release_slow.Notify();
    fast_done.WaitForNotification();
  }
  EXPECT_THAT(outcomes.order(), ElementsAre("slow", "fast"));
}

TEST(DynamicBatcherTest, EveryInstanceTakesWork) {
  absl::BlockingCounter both(2);
  absl::Notification go;
  std::set<int> ids;
  absl::Mutex mu;
  BatchRunner runner = [&](ModelInstance& instance, ScheduledRequests requests, CompletionBatch&) {
    {
      absl::MutexLock lock(&mu);
      ids.insert(static_cast<FakeInstance&>(instance).id);
    }
    both.DecrementCount();
    go.WaitForNotification();
    for (auto& r : requests) r->callback(InferResponse{}, ResponseDelivery{});
  };
  Outcomes outcomes;
  SchedulingOptions options = BatchingOptions(1);
  DynamicBatcher batcher(options, Instances(2), std::move(runner));
  batcher.Enqueue(MakeRequest("a", 1, outcomes.Callback("a")));
  batcher.Enqueue(MakeRequest("b", 1, outcomes.Callback("b")));
  both.Wait();  // only possible if both instances run at once
  go.Notify();
  batcher.Shutdown();
  EXPECT_EQ(ids, (std::set<int>{0, 1}));
}

TEST(DynamicBatcherTest, InlineRunsOnTheCallersThreadWhenAnInstanceIsIdle) {
  std::vector<std::thread::id> threads;
  absl::Mutex mu;
  absl::Notification hold_started, release;
  BatchRunner runner = [&](ModelInstance&, ScheduledRequests requests, CompletionBatch&) {
    {
      absl::MutexLock lock(&mu);
      threads.push_back(std::this_thread::get_id());
    }
    if (requests[0]->request.id == "hold") {
      hold_started.Notify();
      release.WaitForNotification();
    }
    for (auto& r : requests) r->callback(InferResponse{}, ResponseDelivery{});
  };
  Outcomes outcomes;
  SchedulingOptions options = BatchingOptions(4);
  options.batching = false;
  options.max_batch_rows = 0;
  options.run_inline = true;
  DynamicBatcher batcher(options, Instances(1), std::move(runner));
  batcher.Enqueue(MakeRequest("idle", 1, outcomes.Callback("idle")));
  EXPECT_TRUE(outcomes.status_of("idle").ok());  // done before Enqueue returned
  std::thread holder([&] { batcher.Enqueue(MakeRequest("hold", 1, outcomes.Callback("hold"))); });
  hold_started.WaitForNotification();
  // The only instance is busy: this one queues and a worker runs it later.
  batcher.Enqueue(MakeRequest("queued", 1, outcomes.Callback("queued")));
  EXPECT_EQ(outcomes.status_of("queued").code(), absl::StatusCode::kUnknown);  // not yet
  auto bad = MakeRequest("bad", 1, outcomes.Callback("bad"), 2, {{"priority", int64_t{9}}});
  batcher.Enqueue(std::move(bad));
  EXPECT_EQ(outcomes.status_of("bad").code(), absl::StatusCode::kInvalidArgument);
  release.Notify();
  holder.join();
  batcher.Shutdown();
  EXPECT_TRUE(outcomes.status_of("queued").ok());
  absl::MutexLock lock(&mu);
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0], std::this_thread::get_id());
  EXPECT_NE(threads[2], std::this_thread::get_id());  // "queued" ran on the worker
}

TEST(DynamicBatcherTest, NoInlineWhenThePolicyWantsToWaitForABatch) {
  std::thread::id ran_on;
  absl::Notification done;
  BatchRunner runner = [&](ModelInstance&, ScheduledRequests requests, CompletionBatch&) {
    ran_on = std::this_thread::get_id();
    for (auto& r : requests) r->callback(InferResponse{}, ResponseDelivery{});
    done.Notify();
  };
  Outcomes outcomes;
  SchedulingOptions options = BatchingOptions(4);
  options.max_queue_delay = std::chrono::microseconds(100);
  options.run_inline = true;
  DynamicBatcher batcher(options, Instances(1), std::move(runner));
  batcher.Enqueue(MakeRequest("a", 1, outcomes.Callback("a")));
  done.WaitForNotification();
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(DynamicBatcherTest, ShutdownRunsQueuedWorkAndRejectsNewWork) {
  Recorder recorder;
  Outcomes outcomes;
  SchedulingOptions options = BatchingOptions(8);
  options.max_queue_delay = std::chrono::seconds(60);  // would wait a minute for more
  DynamicBatcher batcher(options, Instances(1), recorder.Runner());
  batcher.Enqueue(MakeRequest("waiting", 1, outcomes.Callback("waiting")));
  batcher.Shutdown();  // must not wait 60 s
  EXPECT_TRUE(outcomes.status_of("waiting").ok());
  batcher.Enqueue(MakeRequest("late", 1, outcomes.Callback("late")));
  EXPECT_EQ(outcomes.status_of("late").code(), absl::StatusCode::kUnavailable);
}

// Shutdown() must not return while an instance still runs a request inline on an
// enqueuing thread: the model version destroys its instances as soon as it returns
// (issue 13, finding 5). The inline run is held until Shutdown() returns — which it
// may only do after the run ends — or, with the fix, until a bound passes; the run
// records whether Shutdown() had returned under it. Correct code can never notify
// during the run, so the bound only decides how quickly the old bug shows.
TEST(DynamicBatcherTest, ShutdownWaitsForAnInlineRun) {
  absl::Notification inline_started, shutdown_returned;
  std::atomic<bool> shutdown_returned_during_run{true};
  std::atomic<bool> run_finished{false};
  BatchRunner runner = [&](ModelInstance&, ScheduledRequests requests, CompletionBatch&) {
    inline_started.Notify();
    shutdown_returned.WaitForNotificationWithTimeout(absl::Milliseconds(500));
    shutdown_returned_during_run = shutdown_returned.HasBeenNotified();
    for (auto& r : requests) r->callback(InferResponse{}, ResponseDelivery{});
    run_finished = true;
  };
  Outcomes outcomes;
  SchedulingOptions options = BatchingOptions(4);
  options.batching = false;
  options.max_batch_rows = 0;
  options.run_inline = true;
  DynamicBatcher batcher(options, Instances(1), std::move(runner));
  std::thread enqueuer([&] { batcher.Enqueue(MakeRequest("inline", 1, outcomes.Callback("inline"))); });
  inline_started.WaitForNotification();
  std::atomic<bool> finished_when_shutdown_returned{false};
  std::thread stopper([&] {
    batcher.Shutdown();
    finished_when_shutdown_returned = run_finished.load();
    shutdown_returned.Notify();
  });
  stopper.join();
  enqueuer.join();
  EXPECT_TRUE(finished_when_shutdown_returned);
  EXPECT_FALSE(shutdown_returned_during_run);
  EXPECT_TRUE(outcomes.status_of("inline").ok());
}


TEST(DynamicBatcherTest, BothInstancesRunAShareAtOnce) {
  // max 8 rows, 2 instances (a share: 4), delay an hour: a0-a3 run at once on one
  // instance (held there); b0-b3 then run at once on the other, while the first is
  // still busy. Under Triton's rule both would wait for 8 rows in one batch.
  SchedulingOptions options = BatchingOptions(8);
  options.max_queue_delay = std::chrono::hours(1);
  absl::Mutex mu;
  std::vector<std::vector<std::string>> batches;
  bool release = false;
  BatchRunner runner = [&](ModelInstance&, ScheduledRequests requests, CompletionBatch&) {
    {
      absl::MutexLock lock(&mu);
      batches.emplace_back();
      for (auto& r : requests) batches.back().push_back(r->request.id);
      if (batches.size() == 1) mu.Await(absl::Condition(&release));  // hold the first batch
    }
    for (auto& r : requests) r->callback(InferResponse{}, ResponseDelivery{});
  };
  Outcomes outcomes;
  DynamicBatcher batcher(options, Instances(2), std::move(runner));
  for (int i = 0; i < 4; ++i) {
    const std::string id = StrCat("a", i);
    batcher.Enqueue(MakeRequest(id, 1, outcomes.Callback(id)));
  }
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return batches.size() == 1;
  }));
  for (int i = 0; i < 4; ++i) {
    const std::string id = StrCat("b", i);
    batcher.Enqueue(MakeRequest(id, 1, outcomes.Callback(id)));
  }
  ASSERT_TRUE(Eventually([&] { return outcomes.size() == 4; }));  // b0-b3, a0-a3 still held
  EXPECT_TRUE(outcomes.status_of("b3").ok());
  {
    absl::MutexLock lock(&mu);
    release = true;
  }
  ASSERT_TRUE(Eventually([&] { return outcomes.size() == 8; }));
  absl::MutexLock lock(&mu);
  EXPECT_THAT(batches, ElementsAre(ElementsAre("a0", "a1", "a2", "a3"), ElementsAre("b0", "b1", "b2", "b3")));
}

TEST(DynamicBatcherTest, AtTheDelayAQueueOfLessThanAShareRunsAsOneBatch) {
  // max 256 rows (a share: 128), 2 instances, delay 1 ms on a fake clock: six requests
  // wait for the delay, then run together although the other instance is idle.
  SchedulingOptions options = BatchingOptions(256);
  options.max_queue_delay = std::chrono::milliseconds(1);
  FakeClock clock;
  Recorder recorder;
  Outcomes outcomes;
  DynamicBatcher batcher(options, Instances(2), recorder.Runner(), &clock);
  for (int i = 0; i < 6; ++i) {
    const std::string id = StrCat("r", i);
    batcher.Enqueue(MakeRequest(id, 1, outcomes.Callback(id)));
  }
  EXPECT_EQ(batcher.QueueDepth(), 6u);  // the fake clock has not reached the delay
  clock.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return outcomes.size() == 6; }));
  EXPECT_THAT(recorder.batches(), ElementsAre(ElementsAre("r0", "r1", "r2", "r3", "r4", "r5")));
}

}  // namespace
}  // namespace infera

namespace infera {
namespace {

// A drain is bounded: what is still queued at the deadline is answered Unavailable at
// once, while the execution under way is waited for (it cannot be interrupted).
TEST(DynamicBatcherTest, ShutdownAnswersWhatIsStillQueuedAtTheDeadline) {
  Recorder recorder;
  recorder.HoldFirst();
  Outcomes outcomes;
  DynamicBatcher batcher(BatchingOptions(1), Instances(1), recorder.Runner());
  batcher.Enqueue(MakeRequest("running", 1, outcomes.Callback("running")));
  recorder.WaitStarted();
  batcher.Enqueue(MakeRequest("queued1", 1, outcomes.Callback("queued1")));
  batcher.Enqueue(MakeRequest("queued2", 1, outcomes.Callback("queued2")));
  std::thread shutdown([&] { batcher.Shutdown(absl::Now() + absl::Milliseconds(50)); });
  // The deadline passes with both still queued behind the held execution.
  ASSERT_TRUE(outcomes.AwaitSize(2));
  EXPECT_EQ(outcomes.status_of("queued1").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(outcomes.status_of("queued2").code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(outcomes.status_of("queued1").message()), ::testing::HasSubstr("drain deadline"));
  recorder.Release();
  shutdown.join();
  EXPECT_TRUE(outcomes.status_of("running").ok());
  EXPECT_EQ(recorder.batches().size(), 1u);  // nothing queued ran after the deadline
}

}  // namespace
}  // namespace infera
