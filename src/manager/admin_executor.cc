#include "manager/admin_executor.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "common/cpu_placement.h"
#include "common/retry_after.h"
#include "common/str_cat.h"

namespace infera {

AdminExecutor::AdminExecutor(Options options) : options_(options) {
  absl::MutexLock lock(&shutdown_mu_);
  for (int i = 0; i < std::max(1, options_.num_workers); ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

AdminExecutor::~AdminExecutor() { Shutdown(); }

void AdminExecutor::Submit(Job job) {
  absl::Status rejected;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      rejected = absl::UnavailableError("the server is shutting down; model load / unload is refused");
    } else if (queue_.size() >= options_.max_queued) {
      rejected = WithRetryAfter(
          absl::ResourceExhaustedError(StrCat("too many model load / unload requests waiting (",
                                              queue_.size(), ", the limit); retry later")),
          RetryAfterSeconds());
    } else {
      queue_.push_back(std::move(job));
      return;  // a worker waiting in mu_.Await sees it when the lock is released
    }
  }
  std::move(job.done)(std::move(rejected));
}

int AdminExecutor::RetryAfterSeconds() const {
  const double seconds = static_cast<double>(queue_.size() + running_) * mean_job_seconds_ /
                         static_cast<double>(std::max(1, options_.num_workers));
  return static_cast<int>(std::clamp(std::ceil(seconds), 1.0, 60.0));
}

size_t AdminExecutor::Pending() const {
  absl::MutexLock lock(&mu_);
  return queue_.size() + running_;
}

void AdminExecutor::WorkerLoop() {
  pthread_setname_np(pthread_self(), "infera-admin");
  PinCurrentThreadForModelLoading();  // its jobs are model loads and unloads
  while (true) {
    Job job;
    {
      absl::MutexLock lock(&mu_);
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&has_work));
      // Shutdown() empties the queue when it sets stopping_: nothing queued means exit.
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = std::move(job.run)();
    std::move(job.done)(std::move(status));
    job = {};  // whatever the job captured goes before it counts as finished
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    absl::MutexLock lock(&mu_);
    --running_;
    mean_job_seconds_ = mean_job_seconds_ == 0 ? seconds : 0.8 * mean_job_seconds_ + 0.2 * seconds;
  }
}

void AdminExecutor::Shutdown() {
  absl::MutexLock shutdown_lock(&shutdown_mu_);
  std::deque<Job> never_started;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    never_started.swap(queue_);
  }
  for (Job& job : never_started) {
    std::move(job.done)(absl::UnavailableError("the server is shutting down; this model load / unload never started"));
  }
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

}  // namespace infera
