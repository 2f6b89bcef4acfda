// Clock: the time source of the load generator, injectable so that rate control and
// windowing are unit-tested without sleeping.
//
// Times are int64 nanoseconds on a monotonic clock with an arbitrary epoch; only
// differences mean anything.
//
// Thread-safety: SteadyClock is thread-safe. FakeClock (tests) is not; it belongs to
// the test's thread.
//
// Usage:
//   SteadyClock clock;
//   int64_t t0 = clock.NowNs();
#ifndef INFERA_TOOLS_BENCH_BENCH_CLOCK_H_
#define INFERA_TOOLS_BENCH_BENCH_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace infera::bench {

constexpr int64_t kNsPerUs = 1000;
constexpr int64_t kNsPerMs = 1000 * 1000;
constexpr int64_t kNsPerSecond = 1000 * 1000 * 1000;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() const = 0;
};

class SteadyClock final : public Clock {
 public:
  int64_t NowNs() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// Time stands still until the test moves it.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ns = 1'000'000'000) : now_ns_(start_ns) {}
  int64_t NowNs() const override { return now_ns_; }
  void SetNs(int64_t now_ns) { now_ns_ = now_ns; }
  void AdvanceNs(int64_t delta_ns) { now_ns_ += delta_ns; }

 private:
  int64_t now_ns_;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_BENCH_CLOCK_H_
