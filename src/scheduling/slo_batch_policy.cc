#include "scheduling/slo_batch_policy.h"

#include <algorithm>
#include <cmath>

namespace infera {
namespace {
constexpr double kAlpha = 0.2;          // EWMA weight of a new observation
constexpr double kMinWaitSeconds = 50e-6;  // shorter waits are not worth a wake-up

double Seconds(Nanos d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

ComputeTimeModel::ComputeTimeModel(int64_t max_rows)
    : by_rows_(static_cast<size_t>(std::max<int64_t>(max_rows, 1)) + 1) {}

void ComputeTimeModel::Observe(int64_t rows, double seconds) {
  rows = std::clamp<int64_t>(rows, 1, static_cast<int64_t>(by_rows_.size()) - 1);
  Estimate& e = by_rows_[rows];
  if (e.count == 0) {
    e.mean = seconds;
    e.deviation = seconds * 0.1;
  } else {
    e.deviation = (1 - kAlpha) * e.deviation + kAlpha * std::abs(seconds - e.mean);
    e.mean = (1 - kAlpha) * e.mean + kAlpha * seconds;
  }
  ++e.count;
  ++observations_;
}

std::optional<double> ComputeTimeModel::Predict(int64_t rows, double num_deviations) const {
  rows = std::clamp<int64_t>(rows, 1, static_cast<int64_t>(by_rows_.size()) - 1);
  if (by_rows_[rows].count > 0) return by_rows_[rows].mean + num_deviations * by_rows_[rows].deviation;
  // Least squares through the seen sizes (weighted equally), plus the largest seen
  // deviation; never below the nearest smaller seen size's estimate.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, max_dev = 0, floor = 0;
  for (size_t r = 1; r < by_rows_.size(); ++r) {
    const Estimate& e = by_rows_[r];
    if (e.count == 0) continue;
    n += 1;
    sx += r;
    sy += e.mean;
    sxx += static_cast<double>(r) * r;
    sxy += r * e.mean;
    max_dev = std::max(max_dev, e.deviation);
    if (static_cast<int64_t>(r) < rows) floor = e.mean + num_deviations * e.deviation;
  }
  if (n == 0) return std::nullopt;
  double predicted;
  if (n == 1 || sxx * n - sx * sx <= 0) {
    // One size seen: assume time proportional to rows (pessimistic for batch-friendly models).
    const double per_row = sy / sx;
    predicted = per_row * rows;
  } else {
    const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    const double intercept = (sy - slope * sx) / n;
    predicted = intercept + std::max(0.0, slope) * rows;
  }
  return std::max(predicted + num_deviations * max_dev, floor);
}

SloBatchPolicy::SloBatchPolicy(const SchedulingOptions& options, int num_instances)
    : max_rows_(std::max<int64_t>(options.max_batch_rows, 1)),
      budget_seconds_(kBudgetFraction *
                      std::chrono::duration<double>(options.latency_slo.value_or(
                          std::chrono::microseconds(0))).count()),
      num_instances_(std::max(num_instances, 1)),
      compute_(max_rows_) {}

void SloBatchPolicy::OnArrival(int64_t rows, SteadyTime now) {
  if (last_arrival_) {
    const double gap = Seconds(now - *last_arrival_) / static_cast<double>(std::max<int64_t>(rows, 1));
    seconds_per_row_ = seconds_per_row_ == 0 ? gap : (1 - kAlpha) * seconds_per_row_ + kAlpha * gap;
  }
  last_arrival_ = now;
}

void SloBatchPolicy::OnExecuted(int64_t rows, Nanos duration) {
  compute_.Observe(rows, Seconds(duration));
}

BatchDecision SloBatchPolicy::Decide(const PendingBatch& pending, SteadyTime now) {
  const size_t all = pending.rows.size();
  const int64_t rows = pending.total_rows();
  if (rows >= max_rows_ || compute_.observations() < kWarmupExecutions) return {all, {}};
  const double waited = Seconds(now - pending.oldest_enqueue);
  const std::optional<double> now_cost = compute_.PredictHigh(rows);
  const double rate = arrival_rate();
  if (!now_cost || waited + *now_cost >= budget_seconds_ || rate <= 0) return {all, {}};

  // Longest wait that still fits the budget with the rows expected to arrive meanwhile.
  auto fits = [&](double wait) {
    const int64_t expected =
        std::min<int64_t>(max_rows_, rows + static_cast<int64_t>(std::floor(rate * wait)));
    return waited + wait + compute_.PredictHigh(expected).value_or(budget_seconds_) <= budget_seconds_;
  };
  double lo = 0;
  double hi = std::min(budget_seconds_ - waited, static_cast<double>(max_rows_ - rows) / rate);
  if (fits(hi)) {
    lo = hi;
  } else {
    for (int i = 0; i < 30; ++i) {
      const double mid = (lo + hi) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
  }
  // Waiting pays only for rows that are expected to arrive, and only until the batch
  // keeps up with the arrivals: the instances then drain the queue as fast as it fills,
  // and any longer wait is latency and idle time bought for nothing.
  auto keeps_up = [&](int64_t n) {
    const std::optional<double> cost = compute_.PredictMean(n);
    return cost && rate * *cost <= kTargetUtilization * num_instances_ * static_cast<double>(n);
  };
  if (keeps_up(rows)) return {all, {}};
  const int64_t bound_rows = static_cast<int64_t>(std::floor(rate * lo));  // expected within the bound
  if (bound_rows < 1) return {all, {}};
  int64_t extra = bound_rows;  // none keeps up within the bound: wait all of it
  for (int64_t k = 1; k < bound_rows; ++k) {
    if (keeps_up(std::min(max_rows_, rows + k))) {
      extra = k;
      break;
    }
  }
  const double wait = static_cast<double>(extra) / rate;
  if (wait < kMinWaitSeconds) return {all, {}};
  return {0, now + std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(wait))};
}

}  // namespace infera
