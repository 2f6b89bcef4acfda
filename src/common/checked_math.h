// Overflow-safe arithmetic for values that come from clients or configs.
//
// Every product or sum of a client-supplied number goes through these, so that a huge
// value becomes a clear error (nullopt) or a saturated bound, never signed overflow
// (undefined behaviour) or a wrapped size.
//
//   std::optional<int64_t> bytes = CheckedMul(count, element_size);
//   if (!bytes) return InvalidArgument("too large");
//   SteadyTime deadline = SaturatingAdd(now, timeout);  // clamps at time_point::max()
//
// Thread-safe (pure functions).
#ifndef INFERA_COMMON_CHECKED_MATH_H_
#define INFERA_COMMON_CHECKED_MATH_H_

#include <chrono>
#include <cstdint>
#include <optional>

namespace infera {

// a * b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// a + b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// `time + delta` clamped to the clock's range: a delta too large for the clock's
// duration type, or a sum past time_point::max() / min(), saturates there.
template <typename Clock, typename Duration, typename Rep, typename Period>
std::chrono::time_point<Clock, Duration> SaturatingAdd(std::chrono::time_point<Clock, Duration> time,
                                                       std::chrono::duration<Rep, Period> delta) {
  using TimePoint = std::chrono::time_point<Clock, Duration>;
  using Delta = std::chrono::duration<Rep, Period>;
  // Converting first could overflow (microseconds -> nanoseconds multiplies by 1000).
  if (delta >= std::chrono::duration_cast<Delta>(Duration::max())) return TimePoint::max();
  if (delta <= std::chrono::duration_cast<Delta>(Duration::min())) return TimePoint::min();
  const Duration d = std::chrono::duration_cast<Duration>(delta);
  if (d.count() >= 0 && time > TimePoint::max() - d) return TimePoint::max();
  if (d.count() < 0 && time < TimePoint::min() - d) return TimePoint::min();
  return time + d;
}

}  // namespace infera

#endif  // INFERA_COMMON_CHECKED_MATH_H_
