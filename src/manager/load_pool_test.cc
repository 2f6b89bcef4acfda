#include "manager/load_pool.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

// Counts what runs at once. Enter() waits (bounded) until `overlap` run together the
// first time, so that a cap is really reached, not just never exceeded by luck; later
// entries do not wait.
class Concurrency {
 public:
  explicit Concurrency(int overlap) : overlap_(overlap) {}
  void Enter() {
    absl::MutexLock lock(&mu_);
    ++running_;
    ++started_;
    max_ = std::max(max_, running_);
    mu_.AwaitWithTimeout(absl::Condition(this, &Concurrency::Met), absl::Seconds(10));
    released_ = true;
  }
  void Exit() {
    absl::MutexLock lock(&mu_);
    --running_;
  }
  int max() {
    absl::MutexLock lock(&mu_);
    return max_;
  }
  int started() {
    absl::MutexLock lock(&mu_);
    return started_;
  }

 private:
  bool Met() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_ >= overlap_ || released_; }

  const int overlap_;
  absl::Mutex mu_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  int max_ ABSL_GUARDED_BY(mu_) = 0;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

TEST(LoadPool, SubmittedTasksRunAtMostThreadsAtOnce) {
  Concurrency c(2);
  {
    LoadPool pool(2);
    for (int i = 0; i < 8; ++i) {
      pool.Submit([&] {
        c.Enter();
        c.Exit();
      });
    }
    pool.Wait();
    EXPECT_EQ(c.started(), 8);
  }
  EXPECT_EQ(c.max(), 2);
}

TEST(LoadPool, RunAllRunsEachTaskOnceAndHelpersShareTheCap) {
  Concurrency c(3);
  std::vector<std::atomic<int>> runs(3 * 5);
  {
    LoadPool pool(3);
    // Three loads, each splitting into 5 tasks: every pool thread is inside a RunAll at
    // some point, and nobody waits for a task that nobody runs.
    for (int load = 0; load < 3; ++load) {
      pool.Submit([&, load] {
        std::vector<std::function<void()>> tasks;
        for (int t = 0; t < 5; ++t) {
          tasks.push_back([&, load, t] {
            c.Enter();
            runs[load * 5 + t]++;
            c.Exit();
          });
        }
        pool.RunAll(std::move(tasks));
      });
    }
    pool.Wait();
  }
  for (auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_EQ(c.max(), 3);
}

TEST(LoadPool, IdleThreadsHelpARunAll) {
  Concurrency c(4);
  LoadPool pool(4);
  std::vector<std::function<void()>> tasks;
  for (int t = 0; t < 4; ++t) {
    tasks.push_back([&] {
      c.Enter();  // met only when the caller and three pool threads run one each
      c.Exit();
    });
  }
  pool.Submit([&] { pool.RunAll(std::move(tasks)); });
  pool.Wait();
  EXPECT_EQ(c.max(), 4);
}

TEST(LoadPool, RunAllFromOutsideThePoolAndEmpty) {
  LoadPool pool(1);
  pool.RunAll({});
  std::atomic<int> sum{0};
  std::vector<std::function<void()>> tasks;
  for (int t = 1; t <= 10; ++t) tasks.push_back([&, t] { sum += t; });
  pool.RunAll(std::move(tasks));
  EXPECT_EQ(sum.load(), 55);
  pool.Wait();  // nothing submitted: returns at once
}

}  // namespace
}  // namespace infera
