#include "scheduling/sequence_batch_hold.h"

#include <algorithm>

namespace infera {
namespace {

// Whether `ready_rows` is a batch worth running without waiting.
bool Satisfied(const SequenceBatchingOptions& options, int ready_rows) {
  if (options.strategy == SequenceBatchingOptions::Strategy::kDirect) {
    // minimum_slot_utilization 0 (the default): a delay alone never holds, as Triton.
    return options.min_ready_rows <= 0 || ready_rows >= options.min_ready_rows;
  }
  // Oldest: a full batch, a preferred size, or more than the largest preferred size
  // (as the dynamic batcher: without preferred sizes only a full batch satisfies).
  const int64_t full = std::min<int64_t>(options.max_batch_rows, options.slots_per_instance);
  if (ready_rows >= full) return true;
  const std::vector<int>& preferred = options.preferred_rows;
  if (preferred.empty()) return false;
  return ready_rows >= preferred.back() || std::binary_search(preferred.begin(), preferred.end(), ready_rows);
}

}  // namespace

std::optional<SteadyTime> SequenceBatchHoldUntil(const SequenceBatchingOptions& options, int ready_rows,
                                                 SteadyTime oldest_arrival, SteadyTime now) {
  if (options.max_queue_delay.count() <= 0 || Satisfied(options, ready_rows)) return std::nullopt;
  const SteadyTime deadline = oldest_arrival + options.max_queue_delay;
  if (now >= deadline) return std::nullopt;
  return deadline;
}

}  // namespace infera
