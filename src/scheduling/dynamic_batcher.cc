#include "scheduling/dynamic_batcher.h"

#include <algorithm>
#include <cmath>

#include "common/completion_batch.h"
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
      policy_(CreateBatchPolicy(options_, static_cast<int>(instances_.size()))) {
  if (options_.preserve_ordering) ordered_.emplace();
  {
    absl::MutexLock lock(&mu_);
    busy_.assign(instances_.size(), false);
    waits_.assign(instances_.size(), WaitState{});
  }
  absl::MutexLock lock(&shutdown_mu_);
  for (size_t i = 0; i < instances_.size(); ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
  }
}

DynamicBatcher::~DynamicBatcher() { Shutdown(); }

void DynamicBatcher::Shutdown(absl::Time deadline) {
  absl::MutexLock shutdown_lock(&shutdown_mu_);
  ScheduledRequests abandoned;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    work_available_.SignalAll();
    // The workers run what is queued without delay; what is still queued at the deadline
    // is taken out and answered (below), so the drain ends in time.
    if (deadline != absl::InfiniteFuture() &&
        !mu_.AwaitWithDeadline(
            absl::Condition(+[](RequestQueue* queue) ABSL_NO_THREAD_SAFETY_ANALYSIS { return queue->empty(); },
                            &queue_),
            deadline)) {
      abandoned = queue_.TakeAll();
    }
  }
  for (std::unique_ptr<ScheduledRequest>& r : abandoned) {
    r->callback(absl::UnavailableError("the model version is being unloaded and its drain deadline passed while "
                                       "the request was queued"),
                ResponseDelivery{});
  }
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  // A worker exits once the queue is empty, even while its instance runs a request
  // inline on an enqueuing thread. Wait for those runs too: the caller destroys the
  // instances once this returns.
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &DynamicBatcher::NoInstanceBusy));
}

bool DynamicBatcher::NoInstanceBusy() const {
  return std::none_of(busy_.begin(), busy_.end(), [](bool busy) { return busy; });
}

size_t DynamicBatcher::QueueDepth() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

uint64_t DynamicBatcher::ArrivalWakeUps() const {
  absl::MutexLock lock(&mu_);
  return arrival_wakeups_;
}

DynamicBatcher::Waiting DynamicBatcher::WaitingWorkers() const {
  absl::MutexLock lock(&mu_);
  Waiting waiting;
  for (const WaitState& w : waits_) {
    if (w.kind == WaitState::Kind::kIdle) ++waiting.idle;
    if (w.kind == WaitState::Kind::kTimed) ++waiting.timed;
  }
  return waiting;
}

Scheduler::Load DynamicBatcher::CumulativeLoad() const {
  return {busy_ns_.load(std::memory_order_relaxed), executed_requests_.load(std::memory_order_relaxed),
          instances_.size()};
}

int DynamicBatcher::RetryAfterSeconds() const {
  const double seconds = static_cast<double>(queue_.size()) * mean_seconds_per_request_ /
                         static_cast<double>(instances_.size());
  return static_cast<int>(std::clamp(std::ceil(seconds), 1.0, 60.0));
}

void DynamicBatcher::Reject(std::vector<RequestQueue::Rejection> rejected) {
  for (RequestQueue::Rejection& r : rejected) r.request->callback(std::move(r.status), ResponseDelivery{});
}

std::optional<size_t> DynamicBatcher::ClaimForInline() {
  // Inline only when it cannot reorder or starve anything: nothing queued, and no
  // policy that would rather wait for company (a delay or an SLO to batch towards).
  if (!options_.run_inline || stopping_ || !queue_.empty() || options_.preserve_ordering ||
      (options_.batching && (options_.max_queue_delay.count() > 0 || options_.latency_slo))) {
    return std::nullopt;
  }
  for (size_t i = 0; i < busy_.size(); ++i) {
    if (!busy_[i]) {
      busy_[i] = true;
      return i;
    }
  }
  return std::nullopt;
}

void DynamicBatcher::Enqueue(std::unique_ptr<ScheduledRequest> request) {
  if (ordered_) request->callback = ordered_->Wrap(std::move(request->callback));
  std::optional<RequestQueue::Rejection> rejected;
  std::vector<RequestQueue::Rejection> swept;
  std::optional<size_t> inline_instance;
  RequestQueue::Admitted admitted;
  {
    absl::MutexLock lock(&mu_);
    const SteadyTime now = clock_->Now();
    const int64_t rows = request->batch_size;
    if (stopping_) {
      rejected = RequestQueue::Rejection{
          std::move(request),
          absl::UnavailableError(StrCat("model '", options_.model_name, "' is unloading; retry"))};
    } else if (absl::Status invalid = queue_.CheckParameters(*request); !invalid.ok()) {
      rejected = RequestQueue::Rejection{std::move(request), std::move(invalid)};
    } else if ((inline_instance = ClaimForInline())) {
      request->enqueue_time = now;
      policy_->OnArrival(rows, now);
    } else {
      rejected = queue_.Push(std::move(request), now, &admitted);
      if (rejected && rejected->status.code() == absl::StatusCode::kResourceExhausted) {
        // Abandoned or expired requests may be holding the slots: free them, retry once.
        swept = queue_.Sweep(now);
        if (!swept.empty()) rejected = queue_.Push(std::move(rejected->request), now, &admitted);
      }
      if (rejected && rejected->status.code() == absl::StatusCode::kResourceExhausted) {
        rejected->status = WithRetryAfter(std::move(rejected->status), RetryAfterSeconds());
      }
      if (!rejected) {
        policy_->OnArrival(rows, now);
        WakeForArrival(admitted);
      }
    }
  }
  // Outside the lock: callbacks may do real work (encode and post a response).
  Reject(std::move(swept));
  if (rejected) rejected->request->callback(std::move(rejected->status), ResponseDelivery{});
  if (inline_instance) {
    ScheduledRequests batch;
    batch.push_back(std::move(request));
    Run(*inline_instance, std::move(batch));
  }
}

void DynamicBatcher::WakeForArrival(const RequestQueue::Admitted& arrival) {
  bool idle = false, timed = false, wake_timed = false;
  std::optional<SteadyTime> earliest_timer;
  for (const WaitState& w : waits_) {
    if (w.kind == WaitState::Kind::kIdle) idle = true;
    if (w.kind != WaitState::Kind::kTimed) continue;
    timed = true;
    // wake_rows 0: any arrival may change that worker's decision.
    if (queue_.rows() >= w.wake_rows) wake_timed = true;
    if (!earliest_timer || w.wake_at < *earliest_timer) earliest_timer = w.wake_at;
  }
  // A deadline before every timer needs a worker to expire it in time; a new head
  // (a higher priority level) forms another batch, with its own timing.
  if (timed && arrival.deadline && *arrival.deadline < *earliest_timer) wake_timed = true;
  if (timed && arrival.head) wake_timed = true;
  if (wake_timed) {
    work_available_.SignalAll();  // once per batch: every timed waiter re-decides
    ++arrival_wakeups_;
  } else if (idle && !timed) {
    work_available_.Signal();  // an idle worker starts the batch (or arms its timer)
    ++arrival_wakeups_;
  }
  // Else every worker is busy (the one that finishes looks at the queue) or a worker
  // waits on a timer this arrival does not move.
}

DynamicBatcher::Work DynamicBatcher::NextWork(size_t instance) {
  absl::MutexLock lock(&mu_);
  while (true) {
    const SteadyTime now = clock_->Now();
    Work work;
    work.rejected = queue_.Sweep(now);
    if (!work.rejected.empty()) return work;
    if (queue_.empty() || busy_[instance]) {  // busy: claimed for an inline run
      if (stopping_ && queue_.empty()) {
        work.exit = true;
        return work;
      }
      // A claimed instance is not idle: its inline run's end wakes the workers.
      waits_[instance].kind = busy_[instance] ? WaitState::Kind::kNone : WaitState::Kind::kIdle;
      work_available_.Wait(&mu_);
      waits_[instance].kind = WaitState::Kind::kNone;
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
      busy_[instance] = true;
      if (!queue_.empty()) work_available_.Signal();  // another instance may start now
      return work;
    }
    SteadyTime wake = decision.wake_at.value_or(now + std::chrono::seconds(1));
    if (auto deadline = queue_.EarliestDeadline()) wake = std::min(wake, *deadline);
    waits_[instance] = {WaitState::Kind::kTimed, decision.wake_rows, wake};
    work_available_.WaitWithTimeout(&mu_, absl::FromChrono(wake - now));
    waits_[instance].kind = WaitState::Kind::kNone;
  }
}

void DynamicBatcher::Run(size_t instance, ScheduledRequests batch) {
  int64_t rows = 0;
  for (const auto& r : batch) rows += r->batch_size;
  const size_t num_requests = batch.size();
  const SteadyTime start = clock_->Now();
  {
    // The batch's responses leave in one hand-off per I/O thread, once all are ready.
    CompletionBatch completions;
    runner_(*instances_[instance], std::move(batch), completions);
  }
  const Nanos duration = clock_->Now() - start;
  busy_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, duration.count())), std::memory_order_relaxed);
  executed_requests_.fetch_add(num_requests, std::memory_order_relaxed);
  absl::MutexLock lock(&mu_);
  busy_[instance] = false;
  if (!queue_.empty() || stopping_) work_available_.SignalAll();  // the instance is free again
  policy_->OnExecuted(rows, duration);
  const double per_request = std::chrono::duration<double>(duration).count() / num_requests;
  mean_seconds_per_request_ = mean_seconds_per_request_ == 0
                                  ? per_request
                                  : 0.9 * mean_seconds_per_request_ + 0.1 * per_request;
}

void DynamicBatcher::WorkerLoop(size_t instance) {
  while (true) {
    Work work = NextWork(instance);
    Reject(std::move(work.rejected));
    if (work.exit) return;
    if (!work.batch.empty()) Run(instance, std::move(work.batch));
  }
}

}  // namespace infera
