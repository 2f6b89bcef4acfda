// Canary: a traffic split between a model's baseline and canary versions, with
// automatic rollback when the canary is slower or fails more (docs/lifecycle.md).
//
//   CanaryConfig   read from the model's config `parameters` (canary.*).
//   CanaryController
//     Route(key)            -> true when this request goes to the canary
//                              (sticky by key: hash(key) % 100 < weight; without a
//                              key, a deterministic counter spread: exactly `weight`
//                              of every 100 consecutive unkeyed requests)
//     Observe(now, b, c)    -> takes per-second cumulative samples of both sides and
//                              judges the last window; rolls back when a threshold is
//                              crossed with enough requests on both sides.
//
// Thread-safe.
#ifndef INFERA_MANAGER_CANARY_H_
#define INFERA_MANAGER_CANARY_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "model_config.pb.h"

namespace infera {

struct CanaryConfig {
  int64_t canary_version = 0;
  std::optional<int64_t> baseline_version;  // default: highest other serving version
  double weight_percent = 10;
  double max_p99_increase_percent = 20;
  // The P99 must also be this much higher in absolute terms: on ms-scale models a
  // +20 % difference on a few hundred samples is often noise.
  double min_p99_increase_ms = 2;
  double max_error_rate_percent = 0.5;
  int64_t min_requests = 100;
  std::chrono::seconds window{60};
};

// nullopt when the config declares no canary; InvalidArgument naming the parameter for
// a bad value.
absl::StatusOr<std::optional<CanaryConfig>> CanaryConfigFromModelConfig(
    const inference::ModelConfig& config);

enum class CanaryState { kActive = 1, kRolledBack = 2, kPromoted = 3 };
std::string_view CanaryStateName(CanaryState state);

// Cumulative counters of one side at one moment.
struct CanarySample {
  uint64_t requests = 0;
  uint64_t errors = 0;
  std::vector<uint64_t> latency;  // LatencyHistogram snapshot
};

class CanaryController {
 public:
  CanaryController(CanaryConfig config, int64_t baseline_version);

  const CanaryConfig& config() const { return config_; }
  int64_t baseline_version() const { return baseline_version_; }

  // Whether a request with `routing_key` (empty: none) goes to the canary. No
  // randomness: a key always gets the same side, and of every 10,000 consecutive
  // unkeyed calls exactly weight_percent * 100 (rounded) go to the canary.
  bool Route(std::string_view routing_key) const;

  // Records both sides' cumulative samples at `now` and judges the window.
  void Observe(SteadyTime now, CanarySample baseline, CanarySample canary);

  void Promote();
  CanaryState state() const;
  std::string reason() const;  // why it was rolled back / promoted

 private:
  struct Point {
    SteadyTime time;
    CanarySample baseline;
    CanarySample canary;
  };

  const CanaryConfig config_;
  const int64_t baseline_version_;
  std::atomic<double> weight_percent_;
  mutable std::atomic<uint64_t> unkeyed_count_{0};  // unkeyed requests routed so far
  mutable absl::Mutex mu_;
  CanaryState state_ ABSL_GUARDED_BY(mu_) = CanaryState::kActive;
  std::string reason_ ABSL_GUARDED_BY(mu_);
  std::deque<Point> history_ ABSL_GUARDED_BY(mu_);
};

}  // namespace infera

#endif  // INFERA_MANAGER_CANARY_H_
