#include "tools/bench/arrival_schedule.h"

#include <cmath>

namespace infera::bench {

std::string_view ArrivalDistributionName(ArrivalDistribution distribution) {
  return distribution == ArrivalDistribution::kConstant ? "constant" : "poisson";
}

std::optional<ArrivalDistribution> ParseArrivalDistribution(std::string_view name) {
  if (name == "constant") return ArrivalDistribution::kConstant;
  if (name == "poisson") return ArrivalDistribution::kPoisson;
  return std::nullopt;
}

ArrivalSchedule::ArrivalSchedule(double rate_per_s, ArrivalDistribution distribution,
                                 uint64_t seed)
    : rate_per_s_(rate_per_s), distribution_(distribution), rng_(seed), exponential_(rate_per_s) {}

int64_t ArrivalSchedule::Next() {
  if (distribution_ == ArrivalDistribution::kConstant) {
    return std::llround(static_cast<double>(index_++) * 1e9 / rate_per_s_);
  }
  // The first arrival also waits one gap: a Poisson process has no arrival at t = 0.
  poisson_offset_s_ += exponential_(rng_);
  return std::llround(poisson_offset_s_ * 1e9);
}

}  // namespace infera::bench
