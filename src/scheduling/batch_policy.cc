#include "scheduling/batch_policy.h"

#include <algorithm>

#include "common/checked_math.h"
#include "scheduling/slo_batch_policy.h"

namespace infera {

int64_t PendingBatch::total_rows() const {
  int64_t total = 0;
  for (int64_t r : rows) total += r;
  return total;
}

DelayBatchPolicy::DelayBatchPolicy(const SchedulingOptions& options, int num_instances)
    : options_(options), num_instances_(std::max(1, num_instances)) {}

int64_t DelayBatchPolicy::InstanceShare() const {
  if (num_instances_ <= 1 || !options_.preferred_batch_sizes.empty()) return options_.max_batch_rows;
  return std::max<int64_t>(1, (options_.max_batch_rows + num_instances_ - 1) / num_instances_);
}

size_t DelayBatchPolicy::PrefixWithin(const PendingBatch& pending, int64_t max_rows) {
  size_t fit = 0;
  for (int64_t sum = 0; fit < pending.rows.size() && sum + pending.rows[fit] <= max_rows; ++fit) {
    sum += pending.rows[fit];
  }
  return std::max<size_t>(fit, 1);
}

size_t DelayBatchPolicy::PreferredPrefix(const PendingBatch& pending) const {
  const auto& preferred = options_.preferred_batch_sizes;
  size_t best = 0;
  int64_t rows = 0;
  for (size_t i = 0; i < pending.rows.size(); ++i) {
    rows += pending.rows[i];
    if (std::binary_search(preferred.begin(), preferred.end(), rows)) best = i + 1;
  }
  return best;
}

BatchDecision DelayBatchPolicy::Decide(const PendingBatch& pending, SteadyTime now) {
  const size_t all = pending.rows.size();
  if (!options_.batching) return {all, {}};
  // Full (the candidates never exceed max rows), or an instance's share is formed
  // (more than one instance, no preferred sizes): run it, another instance takes what
  // follows.
  const int64_t share = InstanceShare();
  if (pending.total_rows() >= share) {
    return share < options_.max_batch_rows ? BatchDecision{PrefixWithin(pending, share), {}}
                                           : BatchDecision{all, {}};
  }
  const auto& preferred = options_.preferred_batch_sizes;
  const size_t preferred_prefix = PreferredPrefix(pending);
  if (!preferred.empty()) {
    int64_t rows = 0;
    for (size_t i = 0; i < preferred_prefix; ++i) rows += pending.rows[i];
    if (preferred_prefix > 0 && rows == preferred.back()) return {preferred_prefix, {}};
    if (pending.total_rows() > preferred.back()) {
      // Past the largest preferred size without hitting one exactly: run what fits.
      if (preferred_prefix > 0) return {preferred_prefix, {}};
      return {PrefixWithin(pending, preferred.back()), {}};
    }
  }
  // Saturating: the delay is bounded at load (1 hour), but the sum must never wrap into
  // the past (which would run every batch at once).
  const SteadyTime deadline = SaturatingAdd(pending.oldest_enqueue, options_.max_queue_delay);
  if (now >= deadline) return {preferred_prefix > 0 ? preferred_prefix : all, {}};
  // Below these rows the answer stays "wait until the deadline" whatever arrives: the
  // checks above run only once the rows reach max rows (an instance's share) or the
  // largest preferred size.
  const int64_t wake_rows = preferred.empty() ? share : std::min(options_.max_batch_rows, preferred.back());
  return {0, deadline, std::max<int64_t>(wake_rows, 1)};
}

std::unique_ptr<BatchPolicy> CreateBatchPolicy(const SchedulingOptions& options, int num_instances) {
  if (options.batching && options.latency_slo) {
    return std::make_unique<SloBatchPolicy>(options, num_instances);
  }
  return std::make_unique<DelayBatchPolicy>(options, num_instances);
}

}  // namespace infera
