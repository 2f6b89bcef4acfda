// SchedulingOptions: how a model version's requests are queued and batched, derived
// once from its config (dynamic_batching, max_batch_size, parameters) and the server's
// defaults.
//
// Value type.
#ifndef INFERA_SCHEDULING_SCHEDULING_OPTIONS_H_
#define INFERA_SCHEDULING_SCHEDULING_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model_config.pb.h"

namespace infera {

struct QueuePolicy {
  enum class TimeoutAction { kReject, kDelay };
  size_t max_queue_size = 1024;                // never 0: every queue is bounded
  std::chrono::microseconds default_timeout{0};  // 0: none
  bool allow_timeout_override = false;
  TimeoutAction timeout_action = TimeoutAction::kReject;
};

struct SchedulingOptions {
  std::string model_name;
  // Rows one execution may hold: max_batch_size when dynamic batching is on, else 0
  // (each request runs alone, whatever its rows).
  int64_t max_batch_rows = 0;
  bool batching = false;
  std::vector<int64_t> preferred_batch_sizes;  // ascending
  std::chrono::microseconds max_queue_delay{0};
  bool preserve_ordering = false;
  // Priority levels 1..levels (index 0 of `policies` is level 1); at least one level.
  std::vector<QueuePolicy> policies;
  int default_priority_level = 1;
  // SLO-targeting batching (parameter latency_slo_ms); replaces max_queue_delay.
  std::optional<std::chrono::microseconds> latency_slo;
  // Run a request on the enqueuing thread when an instance is idle and nothing waits
  // (the backend's executions are cheaper than two thread hops; Backend::RunsInline).
  bool run_inline = false;

  int num_levels() const { return static_cast<int>(policies.size()); }
};

// Builds the options for `config`. `default_max_queue_size` bounds every queue the
// config leaves unbounded. InvalidArgument for a bad latency_slo_ms, a default level
// outside the levels, or a value past its bound (repository/config_limits.h:
// priority_levels, max_queue_delay_microseconds, queue timeouts and sizes).
absl::StatusOr<SchedulingOptions> SchedulingOptionsFromConfig(const inference::ModelConfig& config,
                                                              size_t default_max_queue_size);

}  // namespace infera

#endif  // INFERA_SCHEDULING_SCHEDULING_OPTIONS_H_
