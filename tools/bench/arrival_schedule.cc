#include "tools/bench/arrival_schedule.h"

#include <cmath>
#include <utility>

namespace infera::bench {

std::string_view ArrivalDistributionName(ArrivalDistribution distribution) {
  switch (distribution) {
    case ArrivalDistribution::kConstant: return "constant";
    case ArrivalDistribution::kPoisson: return "poisson";
    case ArrivalDistribution::kIntervals: return "intervals";
  }
  return "constant";
}

std::optional<ArrivalDistribution> ParseArrivalDistribution(std::string_view name) {
  if (name == "constant") return ArrivalDistribution::kConstant;
  if (name == "poisson") return ArrivalDistribution::kPoisson;
  return std::nullopt;
}

ArrivalSchedule::ArrivalSchedule(double rate_per_s, ArrivalDistribution distribution,
                                 uint64_t seed)
    : rate_per_s_(rate_per_s), distribution_(distribution), rng_(seed), exponential_(rate_per_s) {}

ArrivalSchedule::ArrivalSchedule(std::vector<int64_t> gaps_ns)
    : rate_per_s_(0), distribution_(ArrivalDistribution::kIntervals), rng_(0), exponential_(1.0),
      gaps_ns_(std::move(gaps_ns)) {
  int64_t sum = 0;
  for (int64_t gap : gaps_ns_) sum += gap;
  rate_per_s_ = gaps_ns_.empty() || sum <= 0 ? 0 : static_cast<double>(gaps_ns_.size()) * 1e9 / static_cast<double>(sum);
}

int64_t ArrivalSchedule::Next() {
  if (distribution_ == ArrivalDistribution::kIntervals) {
    const int64_t due = intervals_offset_ns_;
    intervals_offset_ns_ += gaps_ns_[static_cast<size_t>(index_++ % static_cast<int64_t>(gaps_ns_.size()))];
    return due;
  }
  if (distribution_ == ArrivalDistribution::kConstant) {
    return std::llround(static_cast<double>(index_++) * 1e9 / rate_per_s_);
  }
  // The first arrival also waits one gap: a Poisson process has no arrival at t = 0.
  poisson_offset_s_ += exponential_(rng_);
  return std::llround(poisson_offset_s_ * 1e9);
}

}  // namespace infera::bench
