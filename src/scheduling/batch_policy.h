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
// With no preferred sizes and more than one instance, an instance's share,
// ceil(max rows / instances), stands in for the largest preferred size: once the queued
// rows reach it, a batch of at most a share runs at once (and a wait names the share as
// its `wake_rows`), so a queue that would fill every instance is split into one batch per
// instance instead of one batch that waits for max rows or the delay while the other
// instances idle (docs/scheduling.md, "Batching that pays off: second step"). A request
// still waits at most max_queue_delay for company, as under Triton's rule (rows left
// behind a share wait for their own oldest's delay); with preferred sizes, or one
// instance, that rule holds unchanged.
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
  // Requests in the longest prefix of at most `max_rows` rows; at least 1.
  static size_t PrefixWithin(const PendingBatch& pending, int64_t max_rows);

  const SchedulingOptions options_;
  const int num_instances_;
};

// The policy `options` asks for (SLO-targeting when latency_slo is set).
// `num_instances`: the instances that take batches from the queue the policy serves.
std::unique_ptr<BatchPolicy> CreateBatchPolicy(const SchedulingOptions& options, int num_instances = 1);

}  // namespace infera

#endif  // INFERA_SCHEDULING_BATCH_POLICY_H_
