#include "security/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace infera {

TokenBucket::TokenBucket(double rate, double burst, const Clock* clock)
    : rate_(rate), burst_(std::max(1.0, burst)), clock_(clock), level_(burst_), last_(clock->Now()) {}

void TokenBucket::Refill() {
  const SteadyTime now = clock_->Now();
  if (now <= last_) return;
  const double seconds = std::chrono::duration<double>(now - last_).count();
  level_ = std::min(burst_, level_ + seconds * rate_);
  last_ = now;
}

Nanos TokenBucket::TimeUntil(double level) const {
  if (level_ >= level) return Nanos(0);
  const double seconds = (level - level_) / rate_;
  return Nanos(static_cast<int64_t>(std::ceil(std::min(seconds, 1e9) * 1e9)));
}

Nanos TokenBucket::TryTake(double n) {
  absl::MutexLock lock(&mu_);
  Refill();
  if (level_ >= n) {
    level_ -= n;
    return Nanos(0);
  }
  return std::max(Nanos(1), TimeUntil(n));
}

void TokenBucket::Charge(double n) {
  absl::MutexLock lock(&mu_);
  Refill();
  level_ -= n;
}

Nanos TokenBucket::TimeUntilPositive() {
  absl::MutexLock lock(&mu_);
  Refill();
  if (level_ > 0) return Nanos(0);
  // Strictly above zero: one nanosecond's worth past the crossing.
  return TimeUntil(0) + Nanos(1);
}

}  // namespace infera
