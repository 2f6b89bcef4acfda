#include "scheduling/scheduling_options.h"

#include <algorithm>
#include <charconv>

#include "common/str_cat.h"
#include "repository/config_limits.h"

namespace infera {
namespace {

QueuePolicy FromConfigPolicy(const inference::ModelQueuePolicy& config, size_t default_max) {
  QueuePolicy policy;
  policy.max_queue_size = config.max_queue_size() > 0 ? config.max_queue_size() : default_max;
  policy.default_timeout = std::chrono::microseconds(config.default_timeout_microseconds());
  policy.allow_timeout_override = config.allow_timeout_override();
  policy.timeout_action = config.timeout_action() == inference::ModelQueuePolicy::DELAY
                              ? QueuePolicy::TimeoutAction::kDelay
                              : QueuePolicy::TimeoutAction::kReject;
  return policy;
}

absl::Status Bounded(std::string_view field, uint64_t value, uint64_t limit) {
  if (value <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat(field, ": ", value, " is more than the limit of ", limit));
}

absl::Status CheckPolicy(std::string_view field, const inference::ModelQueuePolicy& policy) {
  if (absl::Status s = Bounded(StrCat(field, ".default_timeout_microseconds"),
                               policy.default_timeout_microseconds(), kMaxTimeoutMicros);
      !s.ok()) {
    return s;
  }
  return Bounded(StrCat(field, ".max_queue_size"), policy.max_queue_size(), kMaxQueueSize);
}

// The bounds this module relies on (ValidateModelConfig checks them too, with the file
// name): they keep the level vector small and the deadline arithmetic in range.
absl::Status CheckBounds(const inference::ModelDynamicBatching& batching) {
  if (absl::Status s = Bounded("dynamic_batching.priority_levels", batching.priority_levels(),
                               kMaxPriorityLevels);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Bounded("dynamic_batching.max_queue_delay_microseconds",
                               batching.max_queue_delay_microseconds(), kMaxQueueDelayMicros);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPolicy("dynamic_batching.default_queue_policy",
                                   batching.default_queue_policy());
      !s.ok()) {
    return s;
  }
  for (const auto& [level, policy] : batching.priority_queue_policy()) {
    if (absl::Status s =
            CheckPolicy(StrCat("dynamic_batching.priority_queue_policy[", level, "]"), policy);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SchedulingOptions> SchedulingOptionsFromConfig(const inference::ModelConfig& config,
                                                              size_t default_max_queue_size) {
  SchedulingOptions options;
  options.model_name = config.name();
  if (!config.has_dynamic_batching()) {
    if (config.parameters().count("latency_slo_ms") > 0) {
      return absl::InvalidArgumentError(
          "parameters[latency_slo_ms]: SLO-targeting batching needs dynamic_batching { }");
    }
    QueuePolicy policy;
    policy.max_queue_size = std::max<size_t>(1, default_max_queue_size);
    policy.allow_timeout_override = true;  // a request's own timeout still applies
    options.policies.push_back(policy);
    return options;
  }
  const auto& batching = config.dynamic_batching();
  if (absl::Status bounds = CheckBounds(batching); !bounds.ok()) return bounds;
  options.batching = true;
  options.max_batch_rows = config.max_batch_size();
  options.preferred_batch_sizes.assign(batching.preferred_batch_size().begin(),
                                       batching.preferred_batch_size().end());
  std::sort(options.preferred_batch_sizes.begin(), options.preferred_batch_sizes.end());
  options.max_queue_delay = std::chrono::microseconds(batching.max_queue_delay_microseconds());
  options.preserve_ordering = batching.preserve_ordering();
  const size_t levels = std::max<uint64_t>(1, batching.priority_levels());
  for (size_t level = 1; level <= levels; ++level) {
    auto it = batching.priority_queue_policy().find(level);
    options.policies.push_back(FromConfigPolicy(
        it != batching.priority_queue_policy().end() ? it->second : batching.default_queue_policy(),
        std::max<size_t>(1, default_max_queue_size)));
  }
  // Without priority levels there is one level, whatever default_priority_level says.
  options.default_priority_level =
      batching.priority_levels() > 0 && batching.default_priority_level() > 0
          ? static_cast<int>(std::min<uint64_t>(batching.default_priority_level(), kMaxPriorityLevels + 1))
          : 1;
  if (options.default_priority_level > options.num_levels()) {
    return absl::InvalidArgumentError(StrCat("dynamic_batching.default_priority_level: ",
                                             batching.default_priority_level(), " is outside [1, ",
                                             options.num_levels(), "]"));
  }

  auto slo = config.parameters().find("latency_slo_ms");
  if (slo != config.parameters().end()) {
    const std::string& text = slo->second.string_value();
    double ms = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (ec != std::errc() || end != text.data() + text.size() || !(ms > 0) || ms > 600000) {
      return absl::InvalidArgumentError(
          StrCat("parameters[latency_slo_ms]: '", text, "' is not a latency in milliseconds (> 0)"));
    }
    options.latency_slo = std::chrono::microseconds(static_cast<int64_t>(ms * 1000));
  }
  return options;
}

}  // namespace infera
