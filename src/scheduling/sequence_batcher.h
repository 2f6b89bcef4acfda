// SequenceBatcher: the Scheduler of a stateful model (`sequence_batching`,
// docs/sequence_batching.md).
//
//   Enqueue: parse sequence_id/start/end → SequenceSlots::Admit (slot | backlog | error)
//   worker of instance k: ReleaseIdle; NextBatch(k) → rows (one per ready slot)
//     → control tensors per row, padding rows for idle slots (direct) → BatchRunner
//
// One worker thread per instance runs that instance's batches one after the other, so a
// sequence's requests (bound to one slot of one instance) execute in arrival order.
// Shutdown() refuses new requests (Unavailable), runs what is queued (slots and backlog)
// and joins the workers; what is still queued at its deadline is answered Unavailable.
//
// Thread-safe.
#ifndef INFERA_SCHEDULING_SEQUENCE_BATCHER_H_
#define INFERA_SCHEDULING_SEQUENCE_BATCHER_H_

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "scheduling/scheduler.h"
#include "scheduling/sequence_options.h"
#include "scheduling/sequence_slots.h"

namespace infera {

class SequenceBatcher : public Scheduler {
 public:
  // Starts one worker per instance. REQUIRES: !instances.empty(); `clock` outlives this.
  SequenceBatcher(SequenceBatchingOptions options, std::vector<std::unique_ptr<ModelInstance>> instances,
                  BatchRunner runner, Clock* clock = SystemClock());
  ~SequenceBatcher() override;
  SequenceBatcher(const SequenceBatcher&) = delete;
  SequenceBatcher& operator=(const SequenceBatcher&) = delete;

  // Rejects (callback before returning) a request without a correlation id, with more
  // than one row, of an unknown sequence without START (InvalidArgument), one that would
  // overflow the backlog (ResourceExhausted), or any once stopping (Unavailable).
  void Enqueue(std::unique_ptr<ScheduledRequest> request) override;
  size_t QueueDepth() const override;
  Load CumulativeLoad() const override;
  void Shutdown(absl::Time deadline) override;
  using Scheduler::Shutdown;

  // Sequences holding a slot / waiting in the backlog (for tests and metrics).
  size_t ActiveSequences() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t BacklogSequences() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Next rows for `instance`, or empty with `exit` when stopping and drained.
  std::vector<SequenceSlots::Row> NextRows(size_t instance, bool& exit) ABSL_LOCKS_EXCLUDED(mu_);
  void WorkerLoop(size_t instance);
  // Adds controls and padding, answers cancelled rows, runs the batch.
  void Run(size_t instance, std::vector<SequenceSlots::Row> rows);
  void WakeInstances(const std::vector<int>& instances) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SequenceBatchingOptions options_;
  Clock* const clock_;
  std::vector<std::unique_ptr<ModelInstance>> instances_;
  BatchRunner runner_;

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<absl::CondVar>> work_available_;  // per instance
  SequenceSlots slots_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::atomic<uint64_t> busy_ns_{0};
  std::atomic<uint64_t> executed_requests_{0};
  absl::Mutex shutdown_mu_;  // serialises Shutdown(); held while joining
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(shutdown_mu_);
};

}  // namespace infera

#endif  // INFERA_SCHEDULING_SEQUENCE_BATCHER_H_
