// SloBatchPolicy: batching that targets a latency SLO instead of a hand-tuned delay.
//
// Learns online (docs/scheduling.md, "SLO-targeting batching"):
//   c(n)  execution time of a batch of n rows: per-size EWMA of mean and absolute
//         deviation; unseen sizes from a least-squares line through the seen ones.
//         c_hi(n) = mean + 3 * deviation stands in for its P99.
//   λ     arrival rate in rows per second (EWMA of inter-arrival gaps).
// Decides, with n rows pending whose oldest has waited w and budget B = 0.8 * SLO:
//   run now if the batch is full or w + c_hi(n) >= B; otherwise find the longest Δ with
//   w + Δ + c_hi(n + λΔ) <= B, capped by the time to fill the batch (the SLO bound).
//   Within it, wait only until the batch keeps up with arrivals: the smallest m >= n
//   with λ · c(m) <= kTargetUtilization · instances · m (c = mean execution time). A
//   batch that keeps up already runs now; if none within the bound does (near
//   saturation), wait the whole bound. Waiting longer than keeping up needs buys only
//   latency and idle instance time (measured: docs/benchmarks.md, "slo").
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
  std::optional<double> PredictHigh(int64_t rows) const { return Predict(rows, 3); }
  // Predicted mean execution time in seconds; nullopt before any data.
  std::optional<double> PredictMean(int64_t rows) const { return Predict(rows, 0); }
  int64_t observations() const { return observations_; }

 private:
  struct Estimate {
    int64_t count = 0;
    double mean = 0;
    double deviation = 0;
  };
  std::optional<double> Predict(int64_t rows, double num_deviations) const;

  std::vector<Estimate> by_rows_;  // index = rows
  int64_t observations_ = 0;
};

class SloBatchPolicy : public BatchPolicy {
 public:
  static constexpr int64_t kWarmupExecutions = 8;
  static constexpr double kBudgetFraction = 0.8;
  // Instances may be this busy, on the mean execution times, before batches grow.
  static constexpr double kTargetUtilization = 0.8;

  // `num_instances`: the instances that share this policy's queue (and the arrivals).
  explicit SloBatchPolicy(const SchedulingOptions& options, int num_instances = 1);
  BatchDecision Decide(const PendingBatch& pending, SteadyTime now) override;
  void OnArrival(int64_t rows, SteadyTime now) override;
  void OnExecuted(int64_t rows, Nanos duration) override;

  // Current arrival-rate estimate in rows/s (0 before two arrivals).
  double arrival_rate() const { return seconds_per_row_ > 0 ? 1.0 / seconds_per_row_ : 0; }
  const ComputeTimeModel& compute_model() const { return compute_; }

 private:
  const int64_t max_rows_;
  const double budget_seconds_;
  const int num_instances_;
  ComputeTimeModel compute_;
  std::optional<SteadyTime> last_arrival_;
  double seconds_per_row_ = 0;  // EWMA of inter-arrival gap per row
};

}  // namespace infera

#endif  // INFERA_SCHEDULING_SLO_BATCH_POLICY_H_
