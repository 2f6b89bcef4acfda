#include "manager/load_pool.h"

#include <pthread.h>

#include <atomic>
#include <memory>

#include "common/cpu_placement.h"

namespace infera {

// One RunAll: tasks are claimed by index, so each runs once whoever takes it.
struct LoadPool::Group {
  explicit Group(std::vector<std::function<void()>> t) : tasks(std::move(t)) {}

  // Runs the next unclaimed task; false when none is left to claim.
  bool RunOne() {
    const size_t i = next.fetch_add(1);
    if (i >= tasks.size()) return false;
    tasks[i]();
    absl::MutexLock lock(&mu);
    ++done;
    return true;
  }

  void AwaitAll() {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](Group* g) ABSL_EXCLUSIVE_LOCKS_REQUIRED(g->mu) { return g->done == g->tasks.size(); }, this));
  }

  const std::vector<std::function<void()>> tasks;
  std::atomic<size_t> next{0};
  absl::Mutex mu;
  size_t done ABSL_GUARDED_BY(mu) = 0;
};

LoadPool::LoadPool(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

LoadPool::~LoadPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void LoadPool::Submit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  ++pending_;
  queue_.push_back([this, task = std::move(task)] {
    task();
    absl::MutexLock lock(&mu_);
    --pending_;
  });
}

void LoadPool::RunAll(std::vector<std::function<void()>> tasks) {
  if (tasks.empty()) return;
  auto group = std::make_shared<Group>(std::move(tasks));
  {
    // One helper ticket per task beyond the caller's own; a ticket that finds nothing
    // left to claim returns at once.
    absl::MutexLock lock(&mu_);
    for (size_t i = 1; i < group->tasks.size(); ++i) {
      queue_.push_front([group] {
        while (group->RunOne()) {
        }
      });
    }
  }
  while (group->RunOne()) {
  }
  group->AwaitAll();
}

void LoadPool::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](LoadPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) { return p->pending_ == 0; }, this));
}

void LoadPool::WorkerLoop() {
  pthread_setname_np(pthread_self(), "infera-loader");
  PinCurrentThreadForModelLoading();
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](LoadPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) { return p->stopping_ || !p->queue_.empty(); },
          this));
      if (queue_.empty()) return;  // stopping, nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace infera
