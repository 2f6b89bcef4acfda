#include "common/clock.h"

namespace infera {
namespace {
class SteadyClock : public Clock {
 public:
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
};
}  // namespace

Clock* SystemClock() {
  static SteadyClock clock;
  return &clock;
}

}  // namespace infera
