// DynamicBatcher: the scheduler of every model version (docs/scheduling.md).
//
// N instances, each driven by its own worker thread; one RequestQueue (priority
// levels, bounded, timeouts, cancellation); a BatchPolicy that decides when a free
// instance runs which candidates. Without dynamic batching each request runs alone,
// with the same queue rules.
//
//   Enqueue ──> [RequestQueue] <── worker k: sweep, candidates, policy.Decide ──> run
//                  full → 429 at once (Retry-After from queue depth × service time)
//
// Wake-ups: an arrival wakes a worker only when the worker's decision could change —
// an idle worker must start (or arm the timer of) a batch, the queued rows reach what a
// worker waiting on a batch's timer named (BatchDecision::wake_rows), the arrival's
// queue deadline comes before that worker's timer, or the arrival (of a higher
// priority level) heads a different batch. So a batch that fills while its
// delay runs costs one wake-up, not one per request (docs/scheduling.md, "Batch gather
// and scatter").
//
// With SchedulingOptions::run_inline, a request that finds an idle instance and an empty
// queue runs at once on the enqueuing thread (no thread hop either way), unless the
// policy would wait for more requests to batch.
//
// Shutdown() stops intake, runs everything still queued without delay (what is still
// queued at its deadline is answered Unavailable), joins workers and waits for inline
// runs still executing on enqueuing threads; when it returns no instance is in use.
//
// Thread-safe.
#ifndef INFERA_SCHEDULING_DYNAMIC_BATCHER_H_
#define INFERA_SCHEDULING_DYNAMIC_BATCHER_H_

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "scheduling/batch_policy.h"
#include "scheduling/ordered_completion.h"
#include "scheduling/request_queue.h"
#include "scheduling/scheduler.h"
#include "scheduling/scheduling_options.h"

namespace infera {

class DynamicBatcher : public Scheduler {
 public:
  // Starts one worker per instance. REQUIRES: !instances.empty(); `clock` outlives this.
  DynamicBatcher(SchedulingOptions options, std::vector<std::unique_ptr<ModelInstance>> instances,
                 BatchRunner runner, Clock* clock = SystemClock());
  ~DynamicBatcher() override;

  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  void Enqueue(std::unique_ptr<ScheduledRequest> request) override;
  size_t QueueDepth() const override;
  Load CumulativeLoad() const override;
  void Shutdown(absl::Time deadline) override;
  using Scheduler::Shutdown;

  // Arrivals that woke waiting workers (for tests: with a batch delay about one per
  // batch, not one per request).
  uint64_t ArrivalWakeUps() const ABSL_LOCKS_EXCLUDED(mu_);
  // Workers waiting now: with nothing queued, and on a batch's timer.
  struct Waiting {
    int idle = 0;
    int timed = 0;
  };
  Waiting WaitingWorkers() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // What a worker is waiting for, while it waits (read by Enqueue to decide whom to wake).
  struct WaitState {
    enum class Kind { kNone, kIdle, kTimed };
    Kind kind = Kind::kNone;  // kIdle: nothing queued; kTimed: a batch's timer
    int64_t wake_rows = 0;    // kTimed: queued rows that may change its decision (0: any)
    SteadyTime wake_at{};     // kTimed: when its timer fires
  };
  // One unit of work for a worker: a batch to run, and rejections to complete.
  struct Work {
    ScheduledRequests batch;
    std::vector<RequestQueue::Rejection> rejected;
    bool exit = false;
  };
  Work NextWork(size_t instance) ABSL_LOCKS_EXCLUDED(mu_);
  void WorkerLoop(size_t instance);
  // Runs `batch` on instances_[instance] (claimed by the caller) and records its load.
  void Run(size_t instance, ScheduledRequests batch);
  // An idle instance to run `request` inline on now, claimed; nullopt to queue instead.
  std::optional<size_t> ClaimForInline() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int RetryAfterSeconds() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After an admitted arrival: wakes the waiting workers whose decision it may change,
  // and none otherwise.
  void WakeForArrival(const RequestQueue::Admitted& arrival) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // No instance executing (on a worker or inline). For mu_.Await.
  bool NoInstanceBusy() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Reject(std::vector<RequestQueue::Rejection> rejected);

  const SchedulingOptions options_;
  Clock* const clock_;
  std::vector<std::unique_ptr<ModelInstance>> instances_;
  BatchRunner runner_;
  std::optional<OrderedCompletion> ordered_;  // set when preserve_ordering

  mutable absl::Mutex mu_;
  absl::CondVar work_available_;
  RequestQueue queue_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<BatchPolicy> policy_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<bool> busy_ ABSL_GUARDED_BY(mu_);  // per instance: executing a batch
  std::vector<WaitState> waits_ ABSL_GUARDED_BY(mu_);  // per instance
  uint64_t arrival_wakeups_ ABSL_GUARDED_BY(mu_) = 0;
  double mean_seconds_per_request_ ABSL_GUARDED_BY(mu_) = 0;  // EWMA, for Retry-After
  std::atomic<uint64_t> busy_ns_{0};
  std::atomic<uint64_t> executed_requests_{0};

  absl::Mutex shutdown_mu_;  // serialises Shutdown(); held while joining
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(shutdown_mu_);
};

}  // namespace infera

#endif  // INFERA_SCHEDULING_DYNAMIC_BATCHER_H_
