// AdminExecutor: runs model administration jobs (the repository API's load and unload)
// off the transport threads, on a small pool of owned workers with a bounded queue.
//
// Why: a load lasts as long as the model takes to load and warm up (seconds). On a gRPC
// callback thread it holds one of the few threads that also serve inference (40
// concurrent RepositoryModelLoad calls stalled an unrelated ModelInfer for 8 s); on a
// thread of its own per HTTP request nothing bounds the threads or joins them before
// the server they answer through goes away.
//
// Contract: Submit(job) calls `job.done` exactly once —
//   - synchronously, on the caller's thread, with ResourceExhausted (queue full; the
//     status carries a Retry-After hint) or Unavailable (shutting down); `job.run` is
//     then never called;
//   - or later, on a worker, with what `job.run` returned.
// Jobs start in submission order, `num_workers` at a time.
// Shutdown() stops intake, answers the jobs still queued with Unavailable (they never
// started: a stopping server does not begin loading models), waits for the running
// ones to finish (their `done` included) and joins the workers. Idempotent.
//
// Thread-safe. IMPORTANT: Shutdown() (and the destructor) not from inside a job.
//
// Usage:
//   AdminExecutor admin({.num_workers = 2, .max_queued = 64});
//   admin.Submit({[&] { return manager.LoadModel("resnet"); },
//                 [responder = std::move(responder)](absl::Status s) mutable { ... }});
//   admin.Shutdown();  // at server shutdown, before the models unload
#ifndef INFERA_MANAGER_ADMIN_EXECUTOR_H_
#define INFERA_MANAGER_ADMIN_EXECUTOR_H_

#include <cstddef>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace infera {

class AdminExecutor {
 public:
  struct Options {
    int num_workers = 1;     // clamped to at least 1
    size_t max_queued = 64;  // jobs waiting for a worker (running ones not counted)
  };
  struct Job {
    absl::AnyInvocable<absl::Status() &&> run;
    absl::AnyInvocable<void(absl::Status) &&> done;
  };

  explicit AdminExecutor(Options options);
  ~AdminExecutor();  // Shutdown()
  AdminExecutor(const AdminExecutor&) = delete;
  AdminExecutor& operator=(const AdminExecutor&) = delete;

  // See the class comment. REQUIRES: job.run and job.done are set.
  void Submit(Job job);

  // See the class comment.
  void Shutdown();

  // Jobs queued or running (for tests and logs).
  size_t Pending() const;

 private:
  void WorkerLoop();
  int RetryAfterSeconds() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  double mean_job_seconds_ ABSL_GUARDED_BY(mu_) = 0;  // EWMA, for Retry-After

  absl::Mutex shutdown_mu_;  // serialises Shutdown(); held while joining
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(shutdown_mu_);
};

}  // namespace infera

#endif  // INFERA_MANAGER_ADMIN_EXECUTOR_H_
