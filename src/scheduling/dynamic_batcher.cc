#include "scheduling/dynamic_batcher.h"

#include <algorithm>
#include <cmath>

#include "common/retry_after.h"
#include "common/str_cat.h"

namespace infera {

DynamicBatcher::DynamicBatcher(SchedulingOptions options,
                               std::vector<std::unique_ptr<ModelInstance>> instances,
                               BatchRunner runner, Clock* clock)
    : options_(std::move(options)),
      clock_(clock),
      instances_(std::move(instances)),
      runner_(std::move(runner)),
      queue_(options_),
      policy_(CreateBatchPolicy(options_)) {
  if (options_.preserve_ordering) ordered_.emplace();
  absl::MutexLock lock(&shutdown_mu_);
  for (auto& instance : instances_) {
    workers_.emplace_back([this, raw = instance.get()] { WorkerLoop(*raw); });
  }
}

DynamicBatcher::~DynamicBatcher() { Shutdown(); }

void DynamicBatcher::Shutdown() {
  absl::MutexLock shutdown_lock(&shutdown_mu_);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    work_available_.SignalAll();
  }
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

size_t DynamicBatcher::QueueDepth() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

int DynamicBatcher::RetryAfterSeconds() const {
  const double seconds = static_cast<double>(queue_.size()) * mean_seconds_per_request_ /
                         static_cast<double>(instances_.size());
  return static_cast<int>(std::clamp(std::ceil(seconds), 1.0, 60.0));
}

void DynamicBatcher::Reject(std::vector<RequestQueue::Rejection> rejected) {
  for (RequestQueue::Rejection& r : rejected) r.request->callback(std::move(r.status));
}

void DynamicBatcher::Enqueue(std::unique_ptr<ScheduledRequest> request) {
  if (ordered_) request->callback = ordered_->Wrap(std::move(request->callback));
  std::optional<RequestQueue::Rejection> rejected;
  std::vector<RequestQueue::Rejection> swept;
  {
    absl::MutexLock lock(&mu_);
    const SteadyTime now = clock_->Now();
    if (stopping_) {
      rejected = RequestQueue::Rejection{
          std::move(request),
          absl::UnavailableError(StrCat("model '", options_.model_name, "' is unloading; retry"))};
    } else {
      const int64_t rows = request->batch_size;
      rejected = queue_.Push(std::move(request), now);
      if (rejected && rejected->status.code() == absl::StatusCode::kResourceExhausted) {
        // Abandoned or expired requests may be holding the slots: free them, retry once.
        swept = queue_.Sweep(now);
        if (!swept.empty()) rejected = queue_.Push(std::move(rejected->request), now);
      }
      if (rejected && rejected->status.code() == absl::StatusCode::kResourceExhausted) {
        rejected->status = WithRetryAfter(std::move(rejected->status), RetryAfterSeconds());
      }
      if (!rejected) {
        policy_->OnArrival(rows, now);
        work_available_.Signal();
      }
    }
  }
  // Outside the lock: callbacks may do real work (encode and post a response).
  Reject(std::move(swept));
  if (rejected) rejected->request->callback(std::move(rejected->status));
}

DynamicBatcher::Work DynamicBatcher::NextWork() {
  absl::MutexLock lock(&mu_);
  while (true) {
    const SteadyTime now = clock_->Now();
    Work work;
    work.rejected = queue_.Sweep(now);
    if (!work.rejected.empty()) return work;
    if (queue_.empty()) {
      if (stopping_) {
        work.exit = true;
        return work;
      }
      work_available_.Wait(&mu_);
      continue;
    }
    std::vector<const ScheduledRequest*> candidates = queue_.Candidates(options_.max_batch_rows);
    PendingBatch pending{{}, candidates.front()->enqueue_time};
    for (const ScheduledRequest* c : candidates) {
      pending.rows.push_back(c->batch_size);
      pending.oldest_enqueue = std::min(pending.oldest_enqueue, c->enqueue_time);
    }
    // Stopping: no more arrivals to wait for.
    BatchDecision decision = stopping_ ? BatchDecision{candidates.size(), {}}
                                       : policy_->Decide(pending, now);
    if (decision.num_requests > 0) {
      candidates.resize(std::min(decision.num_requests, candidates.size()));
      work.batch = queue_.Take(candidates);
      if (!queue_.empty()) work_available_.Signal();  // another instance may start now
      return work;
    }
    SteadyTime wake = decision.wake_at.value_or(now + std::chrono::seconds(1));
    if (auto deadline = queue_.EarliestDeadline()) wake = std::min(wake, *deadline);
    work_available_.WaitWithTimeout(&mu_, absl::FromChrono(wake - now));
  }
}

void DynamicBatcher::WorkerLoop(ModelInstance& instance) {
  while (true) {
    Work work = NextWork();
    Reject(std::move(work.rejected));
    if (work.exit) return;
    if (work.batch.empty()) continue;
    int64_t rows = 0;
    for (const auto& r : work.batch) rows += r->batch_size;
    const size_t num_requests = work.batch.size();
    const SteadyTime start = clock_->Now();
    runner_(instance, std::move(work.batch));
    const Nanos duration = clock_->Now() - start;
    absl::MutexLock lock(&mu_);
    policy_->OnExecuted(rows, duration);
    const double per_request = std::chrono::duration<double>(duration).count() / num_requests;
    mean_seconds_per_request_ = mean_seconds_per_request_ == 0
                                    ? per_request
                                    : 0.9 * mean_seconds_per_request_ + 0.1 * per_request;
  }
}

}  // namespace infera
