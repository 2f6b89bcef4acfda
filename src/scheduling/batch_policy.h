// BatchPolicy: decides, each time an instance is free, whether to run the pending
// candidates now (and how many of them) or to wait for more.
//
// Pure decision logic with time passed in, so it is unit-tested with a fake clock:
//   DelayBatchPolicy  Triton's dynamic batcher: preferred batch sizes + max queue delay.
//   SloBatchPolicy    learns execution time per batch size and the arrival rate, and
//                     waits until batches keep up with arrivals, never longer than
//                     a latency target allows
//                     (slo_batch_policy.h; docs/scheduling.md has the algorithm).
//
// Not thread-safe: used under the owning DynamicBatcher's mutex.
#ifndef INFERA_SCHEDULING_BATCH_POLICY_H_
#define INFERA_SCHEDULING_BATCH_POLICY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "scheduling/scheduling_options.h"

namespace infera {

// What a policy sees: the candidate batch in queue order.
struct PendingBatch {
  std::vector<int64_t> rows;  // rows of each candidate request
  SteadyTime oldest_enqueue;  // earliest enqueue time among the candidates
  // Other instances of the queue that are idle now (neither executing nor claimed):
  // they could take a share of the candidates at once.
  int idle_instances = 0;
  int64_t total_rows() const;
};

struct BatchDecision {
  // > 0: run the first `num_requests` candidates now. 0: wait.
  size_t num_requests = 0;
  // When waiting: decide again at this time (or earlier, when a request arrives).
  std::optional<SteadyTime> wake_at;
  // When waiting: before `wake_at`, arrivals can change the decision only once the
  // pending rows reach this many; 0 when any arrival may. The batcher wakes a waiting
  // worker for an arrival only then (one wake-up per batch, not per request).
  int64_t wake_rows = 0;
};

class BatchPolicy {
 public:
  virtual ~BatchPolicy() = default;
  // REQUIRES: !pending.rows.empty().
  virtual BatchDecision Decide(const PendingBatch& pending, SteadyTime now) = 0;
  // Feedback: `rows` arrived at `now` / a batch of `rows` took `duration` end to end
  // on its worker.
  virtual void OnArrival(int64_t /*rows*/, SteadyTime /*now*/) {}
  virtual void OnExecuted(int64_t /*rows*/, Nanos /*duration*/) {}
};

// Triton's semantics: run at once when the batch is full (max rows) or the largest
// preferred size is formed exactly; else wait until the oldest candidate has waited
// max_queue_delay, then run the longest prefix that forms a preferred size, or all.
// Without batching, every request runs alone. A wait names its `wake_rows`: the largest
// preferred size, or max rows when there is none (below it only the delay decides).
//
// With no preferred sizes and more than one instance, the instances that idle share
// the work (docs/scheduling.md, "Batching that pays off: second step"):
//   - split: a batch that runs (full, or at the delay) while `idle_instances` others
//     are idle takes only the longest prefix of at most ceil(rows / (idle + 1)) rows
//     (at least one request); the rest stays queued, past the same deadline, for them;
//   - an instance's share: while another instance is idle, ceil(max rows / instances)
//     rows run at once (and a wait names that share as its `wake_rows`).
// Neither makes a request wait longer than Triton's rule; with preferred sizes, or
// every other instance busy, the rule above holds unchanged.
class DelayBatchPolicy : public BatchPolicy {
 public:
  // `num_instances`: the instances that take batches from the queue this policy serves.
  explicit DelayBatchPolicy(const SchedulingOptions& options, int num_instances = 1);
  BatchDecision Decide(const PendingBatch& pending, SteadyTime now) override;

  // ceil(max rows / instances) with more than one instance and no preferred sizes,
  // else max rows.
  int64_t InstanceShare() const;

 private:
  // Requests in the longest prefix whose rows equal a preferred size; 0 if none.
  size_t PreferredPrefix(const PendingBatch& pending) const;
  // Whether idle instances share the batch (no preferred sizes, > 1 instance, one idle).
  bool Shares(const PendingBatch& pending) const;
  // Requests in the longest prefix of at most `max_rows` rows; at least 1.
  static size_t PrefixWithin(const PendingBatch& pending, int64_t max_rows);
  // Runs `pending` now: all of it, or (sharing) this instance's part of it.
  BatchDecision RunNow(const PendingBatch& pending) const;

  const SchedulingOptions options_;
  const int num_instances_;
};

// The policy `options` asks for (SLO-targeting when latency_slo is set).
// `num_instances`: the instances that take batches from the queue the policy serves.
std::unique_ptr<BatchPolicy> CreateBatchPolicy(const SchedulingOptions& options, int num_instances = 1);

}  // namespace infera

#endif  // INFERA_SCHEDULING_BATCH_POLICY_H_
