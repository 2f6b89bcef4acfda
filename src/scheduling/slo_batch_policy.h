// SloBatchPolicy: batching that targets a latency SLO instead of a hand-tuned delay.
//
// Learns online (docs/scheduling.md, "SLO-targeting batching"):
//   c(n)  execution time of a batch of n rows: per-size EWMA of mean and absolute
//         deviation; unseen sizes from a least-squares line through the seen ones.
//         c_hi(n) = mean + 3 * deviation stands in for its P99.
//   λ     arrival rate in rows per second (EWMA of inter-arrival gaps).
// Decides, with n rows pending whose oldest has waited w and budget B = 0.8 * SLO:
//   run now if the batch is full or w + c_hi(n) >= B; otherwise find the longest Δ with
//   w + Δ + c_hi(n + λΔ) <= B, capped by the time to fill the batch, and wait until the
//   last whole row expected within it arrives (run now if none is expected).
// Until it has seen kWarmupExecutions executions it runs whatever is pending at once.
//
// Not thread-safe: used under the owning DynamicBatcher's mutex.
#ifndef INFERA_SCHEDULING_SLO_BATCH_POLICY_H_
#define INFERA_SCHEDULING_SLO_BATCH_POLICY_H_

#include <optional>
#include <vector>

#include "scheduling/batch_policy.h"

namespace infera {

// Execution time as a function of batch rows, learned from observations.
class ComputeTimeModel {
 public:
  explicit ComputeTimeModel(int64_t max_rows);
  void Observe(int64_t rows, double seconds);
  // Predicted execution time (mean + 3 deviations) in seconds; nullopt before any data.
  std::optional<double> PredictHigh(int64_t rows) const;
  int64_t observations() const { return observations_; }

 private:
  struct Estimate {
    int64_t count = 0;
    double mean = 0;
    double deviation = 0;
  };
  std::vector<Estimate> by_rows_;  // index = rows
  int64_t observations_ = 0;
};

class SloBatchPolicy : public BatchPolicy {
 public:
  static constexpr int64_t kWarmupExecutions = 8;
  static constexpr double kBudgetFraction = 0.8;

  explicit SloBatchPolicy(const SchedulingOptions& options);
  BatchDecision Decide(const PendingBatch& pending, SteadyTime now) override;
  void OnArrival(int64_t rows, SteadyTime now) override;
  void OnExecuted(int64_t rows, Nanos duration) override;

  // Current arrival-rate estimate in rows/s (0 before two arrivals).
  double arrival_rate() const { return seconds_per_row_ > 0 ? 1.0 / seconds_per_row_ : 0; }
  const ComputeTimeModel& compute_model() const { return compute_; }

 private:
  const int64_t max_rows_;
  const double budget_seconds_;
  ComputeTimeModel compute_;
  std::optional<SteadyTime> last_arrival_;
  double seconds_per_row_ = 0;  // EWMA of inter-arrival gap per row
};

}  // namespace infera

#endif  // INFERA_SCHEDULING_SLO_BATCH_POLICY_H_
