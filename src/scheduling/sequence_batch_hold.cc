#include "scheduling/sequence_batch_hold.h"

#include <algorithm>

namespace infera {

SequenceBatchPlan PlanSequenceBatch(const SequenceBatchingOptions& options, int ready_rows, SteadyTime oldest_arrival,
                                    SteadyTime now) {
  const bool delay = options.max_queue_delay.count() > 0;
  const bool expired = !delay || now >= oldest_arrival + options.max_queue_delay;
  const SequenceBatchPlan run_all{std::nullopt, ready_rows};
  const SequenceBatchPlan hold{oldest_arrival + options.max_queue_delay, 0};
  if (options.strategy == SequenceBatchingOptions::Strategy::kDirect) {
    // Row i is slot i: a direct batch takes every ready slot. minimum_slot_utilization 0
    // (the default): a delay alone never holds, as Triton.
    const bool satisfied = options.min_ready_rows <= 0 || ready_rows >= options.min_ready_rows;
    return satisfied || expired ? run_all : hold;
  }
  // Oldest, with the dynamic batcher's rule (docs/scheduling.md): run at once a full batch
  // or the largest preferred size; otherwise wait for the delay, then run the largest
  // preferred size that fits, or everything ready if none does.
  const int64_t full = std::min<int64_t>(options.max_batch_rows, options.slots_per_instance);
  if (ready_rows >= full) return run_all;
  const std::vector<int>& preferred = options.preferred_rows;  // ascending
  if (!preferred.empty() && ready_rows >= preferred.back()) return SequenceBatchPlan{std::nullopt, preferred.back()};
  if (!delay) return run_all;
  if (!expired) return hold;
  auto fits = std::upper_bound(preferred.begin(), preferred.end(), ready_rows);
  if (fits == preferred.begin()) return run_all;
  return SequenceBatchPlan{std::nullopt, *std::prev(fits)};
}

}  // namespace infera
