#include "tools/bench/stability.h"

#include <cmath>

namespace infera::bench {
namespace {

template <typename Samples, typename Get>
bool WithinOfMean(const Samples& samples, double percent, Get get) {
  double sum = 0;
  for (const auto& s : samples) sum += get(s);
  const double mean = sum / static_cast<double>(samples.size());
  if (mean <= 0) return false;
  for (const auto& s : samples) {
    if (std::abs(get(s) - mean) > mean * percent / 100.0) return false;
  }
  return true;
}

}  // namespace

StabilityTracker::StabilityTracker(int windows, double percent)
    : windows_(windows < 1 ? 1 : windows), percent_(percent) {}

void StabilityTracker::Add(double throughput, double latency) {
  samples_.push_back({throughput, latency});
  while (static_cast<int>(samples_.size()) > windows_) samples_.pop_front();
}

bool StabilityTracker::Stable() const {
  if (static_cast<int>(samples_.size()) < windows_) return false;
  return WithinOfMean(samples_, percent_, [](const Sample& s) { return s.throughput; }) &&
         WithinOfMean(samples_, percent_, [](const Sample& s) { return s.latency; });
}

}  // namespace infera::bench
