// Clock: the time source for anything time-based, injectable so tests need no sleeps.
//
// Production code takes a `Clock*` defaulting to SystemClock(); tests pass a FakeClock
// and Advance() it.
//
// Thread-safe.
#ifndef INFERA_COMMON_CLOCK_H_
#define INFERA_COMMON_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace infera {

using SteadyTime = std::chrono::steady_clock::time_point;
using Nanos = std::chrono::nanoseconds;

// Nanoseconds from `from` to `to`, 0 when `to` is earlier (a stage that did not happen,
// or times taken on different threads a hair apart): what statistics record.
inline uint64_t NanosBetween(SteadyTime from, SteadyTime to) {
  const int64_t ns = std::chrono::duration_cast<Nanos>(to - from).count();
  return ns > 0 ? static_cast<uint64_t>(ns) : 0;
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime Now() const = 0;
};

// The process-wide steady clock.
Clock* SystemClock();

// A clock that moves only when told to.
class FakeClock : public Clock {
 public:
  SteadyTime Now() const override { return SteadyTime(Nanos(now_ns_.load())); }
  void Advance(Nanos by) { now_ns_.fetch_add(by.count()); }

 private:
  std::atomic<int64_t> now_ns_{1'000'000'000};
};

}  // namespace infera

#endif  // INFERA_COMMON_CLOCK_H_
