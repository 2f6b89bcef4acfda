// LoadPool: the threads that load models at start-up (docs/cold_start.md).
//
// A fixed number of threads take model loads from a FIFO queue (Submit). A load may split
// its own work into independent tasks (a version's instances: their creation, then their
// warm-up) with RunAll: the calling thread runs them together with any pool thread that
// is idle, which takes such tasks before the next queued load (they go to the front), so
// the load that is furthest along finishes first. The caller claims tasks itself, so
// RunAll never waits for a task that nobody runs, even when every pool thread is inside
// a RunAll of its own; and at most `threads` tasks and loads run at once in total when
// RunAll is called from the pool's own threads.
//
// Thread-safe. The destructor runs what is queued, then joins the threads.
//
// Usage:
//   LoadPool pool(4);
//   for (const std::string& name : names) pool.Submit([&, name] { Load(name, &pool); });
//   pool.Wait();  // every submitted load has finished
#ifndef INFERA_MANAGER_LOAD_POOL_H_
#define INFERA_MANAGER_LOAD_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace infera {

class LoadPool {
 public:
  // REQUIRES: threads >= 1.
  explicit LoadPool(int threads);
  ~LoadPool();
  LoadPool(const LoadPool&) = delete;
  LoadPool& operator=(const LoadPool&) = delete;

  int threads() const { return static_cast<int>(threads_.size()); }

  // Queues `task` behind the loads already queued.
  void Submit(std::function<void()> task);

  // Runs every task of `tasks` (each exactly once, in any order, possibly at the same
  // time) and returns when all have finished. Idle pool threads help; the caller runs
  // what they do not take.
  void RunAll(std::vector<std::function<void()>> tasks);

  // Returns when every task submitted so far has finished (not the RunAll helpers of
  // loads still running: they finish with their load).
  void Wait();

 private:
  struct Group;
  void WorkerLoop();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int pending_ ABSL_GUARDED_BY(mu_) = 0;  // submitted and not finished
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace infera

#endif  // INFERA_MANAGER_LOAD_POOL_H_
