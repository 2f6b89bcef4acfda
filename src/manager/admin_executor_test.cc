#include "manager/admin_executor.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "common/retry_after.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A job that blocks its worker until released, so tests control what is queued.
struct HeldJob {
  absl::Notification started, release, done;
  std::atomic<bool> ran{false};
  absl::Status result;
  AdminExecutor::Job Make(absl::Status status = absl::OkStatus()) {
    return {[this, status] {
              ran = true;
              started.Notify();
              release.WaitForNotification();
              return status;
            },
            [this](absl::Status s) {
              result = std::move(s);
              done.Notify();
            }};
  }
};

TEST(AdminExecutorTest, RunsJobsOffTheCallersThreadAndAnswersWithTheirStatus) {
  AdminExecutor executor({.num_workers = 1, .max_queued = 4});
  absl::Notification done;
  std::thread::id ran_on;
  absl::Status result;
  executor.Submit({[&] {
                     ran_on = std::this_thread::get_id();
                     return absl::NotFoundError("no model 'x'");
                   },
                   [&](absl::Status s) {
                     result = std::move(s);
                     done.Notify();
                   }});
  done.WaitForNotification();
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(result.code(), absl::StatusCode::kNotFound);
}

TEST(AdminExecutorTest, JobsStartInSubmissionOrder) {
  AdminExecutor executor({.num_workers = 1, .max_queued = 8});
  HeldJob first;
  executor.Submit(first.Make());
  first.started.WaitForNotification();
  absl::Mutex mu;
  std::vector<int> order;
  absl::BlockingCounter remaining(5);
  for (int i = 0; i < 5; ++i) {
    executor.Submit({[&, i] {
                       absl::MutexLock lock(&mu);
                       order.push_back(i);
                       return absl::OkStatus();
                     },
                     [&](absl::Status) { remaining.DecrementCount(); }});
  }
  EXPECT_EQ(executor.Pending(), 6u);
  first.release.Notify();
  remaining.Wait();
  absl::MutexLock lock(&mu);
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3, 4));
}

TEST(AdminExecutorTest, FullQueueIsRefusedAtOnceWithRetryAfter) {
  AdminExecutor executor({.num_workers = 1, .max_queued = 1});
  HeldJob running, queued;
  executor.Submit(running.Make());
  running.started.WaitForNotification();
  executor.Submit(queued.Make());  // waits for the worker
  bool refused_ran = false;
  absl::Status refused;
  executor.Submit({[&] {
                     refused_ran = true;
                     return absl::OkStatus();
                   },
                   [&](absl::Status s) { refused = std::move(s); }});
  // Answered before Submit returned, never run.
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("too many model load / unload requests waiting"));
  EXPECT_TRUE(RetryAfterSeconds(refused).has_value());
  running.release.Notify();
  queued.release.Notify();
  queued.done.WaitForNotification();
  EXPECT_TRUE(queued.result.ok());
  EXPECT_FALSE(refused_ran);
}

TEST(AdminExecutorTest, ShutdownRefusesQueuedJobsAndWaitsForTheRunningOne) {
  AdminExecutor executor({.num_workers = 1, .max_queued = 4});
  HeldJob running, queued;
  executor.Submit(running.Make(absl::InternalError("load failed")));
  running.started.WaitForNotification();
  executor.Submit(queued.Make());
  std::atomic<bool> running_done_when_shutdown_returned{false};
  std::thread stopper([&] {
    executor.Shutdown();
    running_done_when_shutdown_returned = running.done.HasBeenNotified();
  });
  // The queued job is answered first (it never started) ...
  queued.done.WaitForNotification();
  EXPECT_EQ(queued.result.code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(queued.ran);
  // ... then Shutdown waits for the running one, whose answer is still delivered.
  running.release.Notify();
  stopper.join();
  EXPECT_TRUE(running_done_when_shutdown_returned);
  EXPECT_EQ(running.result.code(), absl::StatusCode::kInternal);
  // Later submissions are refused at once.
  absl::Status late;
  executor.Submit({[] { return absl::OkStatus(); }, [&](absl::Status s) { late = std::move(s); }});
  EXPECT_EQ(late.code(), absl::StatusCode::kUnavailable);
  executor.Shutdown();  // idempotent
  EXPECT_EQ(executor.Pending(), 0u);
}

TEST(AdminExecutorTest, WorkersRunJobsSideBySide) {
  AdminExecutor executor({.num_workers = 2, .max_queued = 4});
  HeldJob a, b;
  executor.Submit(a.Make());
  executor.Submit(b.Make());
  a.started.WaitForNotification();  // both start although neither has finished
  b.started.WaitForNotification();
  a.release.Notify();
  b.release.Notify();
  a.done.WaitForNotification();
  b.done.WaitForNotification();
}

}  // namespace
}  // namespace infera
