#include "llm/prompt_worker.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

TEST(PromptWorkerTest, RunsTasksInOrderOffTheCallersThread) {
  PromptWorker worker(8);
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  absl::Notification done;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(worker
                    .Post([&, i](bool stopped) {
                      EXPECT_FALSE(stopped);
                      absl::MutexLock lock(&mu);
                      order.push_back(i);
                      threads.push_back(std::this_thread::get_id());
                      if (i == 2) done.Notify();
                    })
                    .ok());
  }
  done.WaitForNotification();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  for (std::thread::id id : threads) EXPECT_NE(id, std::this_thread::get_id());
}

TEST(PromptWorkerTest, BoundedQueueAndStopAnswersWhatIsQueued) {
  PromptWorker worker(2);
  absl::Notification running, release;
  ASSERT_TRUE(worker
                  .Post([&](bool) {
                    running.Notify();
                    release.WaitForNotification();
                  })
                  .ok());
  running.WaitForNotification();  // the first task is off the queue
  std::vector<int> stopped_flags;
  absl::Mutex mu;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(worker
                    .Post([&](bool stopped) {
                      absl::MutexLock lock(&mu);
                      stopped_flags.push_back(stopped);
                    })
                    .ok());
  }
  absl::Status full = worker.Post([](bool) { ADD_FAILURE() << "a refused task ran"; });
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  std::thread stopper([&] { worker.Stop(); });
  // Stop waits for the running task; once it is released, the queued two answer.
  release.Notify();
  stopper.join();
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(stopped_flags.size(), 2u);
  }
  absl::Status after = worker.Post([](bool) { ADD_FAILURE() << "a refused task ran"; });
  EXPECT_EQ(after.code(), absl::StatusCode::kUnavailable) << after;
}

}  // namespace
}  // namespace infera::llm
