// TokenBucket: `rate` tokens per second up to `burst`, over an injected Clock.
//
// Requests take whole tokens (TryTake); LLM usage is charged after the fact (Charge) and
// may drive the level below zero, so the next request waits until it has refilled
// (WaitUntilPositive). Times until a refill are what Retry-After is built from.
//
// Thread-safe (an absl::Mutex around the level; a few ns uncontended).
#ifndef INFERA_SECURITY_TOKEN_BUCKET_H_
#define INFERA_SECURITY_TOKEN_BUCKET_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"

namespace infera {

class TokenBucket {
 public:
  // Starts full. `rate` > 0 tokens per second, `burst` >= 1.
  TokenBucket(double rate, double burst, const Clock* clock);

  // Takes `n` tokens and returns 0 when the level has them; else takes nothing and
  // returns how long until it will.
  Nanos TryTake(double n);
  // Removes `n` tokens (the level may go negative).
  void Charge(double n);
  // 0 when the level is above zero; else how long until it is.
  Nanos TimeUntilPositive();

  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  void Refill() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Nanos TimeUntil(double level) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double rate_;
  const double burst_;
  const Clock* const clock_;
  absl::Mutex mu_;
  double level_ ABSL_GUARDED_BY(mu_);
  SteadyTime last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace infera

#endif  // INFERA_SECURITY_TOKEN_BUCKET_H_
