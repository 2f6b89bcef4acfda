// PlanSequenceBatch: whether a sequence-batcher worker runs its ready rows now or holds
// them back, waiting for more sequences to become ready, and how many it takes — the
// strategies' max_queue_delay_microseconds, with direct's minimum_slot_utilization and
// oldest's preferred_batch_size (docs/sequence_batching.md, "Delays").
//
// A hold never outlasts the delay counted from the oldest ready request's arrival, so no
// request waits past max_queue_delay_microseconds for company. Pure function.
#ifndef INFERA_SCHEDULING_SEQUENCE_BATCH_HOLD_H_
#define INFERA_SCHEDULING_SEQUENCE_BATCH_HOLD_H_

#include <optional>

#include "common/clock.h"
#include "scheduling/sequence_options.h"

namespace infera {

struct SequenceBatchPlan {
  // Set: hold the rows until then (unless more become ready before); unset: run now.
  std::optional<SteadyTime> hold_until;
  // The rows to take when running (oldest: a preferred size where one fits).
  int rows = 0;
};

// `ready_rows` (≥ 1): the rows a batch could take now; `oldest_arrival`: the enqueue time
// of the oldest of them.
SequenceBatchPlan PlanSequenceBatch(const SequenceBatchingOptions& options, int ready_rows, SteadyTime oldest_arrival,
                                    SteadyTime now);

}  // namespace infera

#endif  // INFERA_SCHEDULING_SEQUENCE_BATCH_HOLD_H_
