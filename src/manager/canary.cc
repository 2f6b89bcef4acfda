#include "manager/canary.h"

#include <charconv>
#include <cmath>
#include <functional>

#include "common/logging.h"
#include "common/str_cat.h"
#include "manager/latency_histogram.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

// Reads parameter `key` as a finite number in [min, max]; nullopt when absent. "nan" and
// "inf" parse as doubles, so finiteness is checked before the bounds (every comparison
// with NaN is false).
absl::StatusOr<std::optional<double>> Number(const inference::ModelConfig& config, std::string_view key,
                                             double min, double max) {
  std::optional<std::string> text = ConfigParameter(config, key);
  if (!text) return std::optional<double>();
  double value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(value) || value < min ||
      value > max) {
    return absl::InvalidArgumentError(
        StrCat("parameters[", key, "]: '", *text, "' is not a number in [", min, ", ", max, "]"));
  }
  return std::optional<double>(value);
}

// Reads parameter `key` as a whole number in [min, max] (no fraction, no exponent).
absl::StatusOr<std::optional<int64_t>> Integer(const inference::ModelConfig& config, std::string_view key,
                                               int64_t min, int64_t max) {
  std::optional<std::string> text = ConfigParameter(config, key);
  if (!text) return std::optional<int64_t>();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < min || value > max) {
    return absl::InvalidArgumentError(
        StrCat("parameters[", key, "]: '", *text, "' is not an integer in [", min, ", ", max, "]"));
  }
  return std::optional<int64_t>(value);
}

constexpr int64_t kMaxVersion = int64_t{1} << 53;  // versions are folder names; any sane one fits

}  // namespace

std::string_view CanaryStateName(CanaryState state) {
  switch (state) {
    case CanaryState::kActive: return "ACTIVE";
    case CanaryState::kRolledBack: return "ROLLED_BACK";
    case CanaryState::kPromoted: return "PROMOTED";
  }
  return "UNKNOWN";
}

absl::StatusOr<std::optional<CanaryConfig>> CanaryConfigFromModelConfig(
    const inference::ModelConfig& config) {
  CanaryConfig canary;
  struct NumberField {
    const char* key;
    double min, max;
    double* out;
  };
  struct IntegerField {
    const char* key;
    int64_t min, max;
    std::function<void(int64_t)> set;
  };
  const NumberField numbers[] = {
      {"canary.weight_percent", 0, 100, &canary.weight_percent},
      {"canary.max_p99_increase_percent", 0, 1e6, &canary.max_p99_increase_percent},
      {"canary.min_p99_increase_ms", 0, 1e6, &canary.min_p99_increase_ms},
      {"canary.max_error_rate_percent", 0, 100, &canary.max_error_rate_percent},
  };
  const IntegerField integers[] = {
      {"canary.version", 1, kMaxVersion, [&](int64_t v) { canary.canary_version = v; }},
      {"canary.baseline_version", 1, kMaxVersion, [&](int64_t v) { canary.baseline_version = v; }},
      {"canary.min_requests", 1, int64_t{1'000'000'000'000}, [&](int64_t v) { canary.min_requests = v; }},
      {"canary.window_secs", 1, 86400, [&](int64_t v) { canary.window = std::chrono::seconds(v); }},
  };
  // A misspelt key would silently keep its default (a rollback threshold, the split).
  bool any = false;
  for (const auto& [key, unused] : config.parameters()) {
    if (key.rfind("canary.", 0) != 0) continue;
    any = true;
    bool known = false;
    for (const NumberField& field : numbers) known = known || key == field.key;
    for (const IntegerField& field : integers) known = known || key == field.key;
    if (!known) {
      std::vector<std::string> keys;
      for (const IntegerField& field : integers) keys.push_back(field.key);
      for (const NumberField& field : numbers) keys.push_back(field.key);
      return absl::InvalidArgumentError(
          StrCat("parameters[", key, "] is not a canary setting (known: ", StrJoin(keys, ", "), ")"));
    }
  }
  if (!any) return std::optional<CanaryConfig>();
  if (!ConfigParameter(config, "canary.version")) {
    for (const auto& [key, unused] : config.parameters()) {
      if (key.rfind("canary.", 0) == 0) {
        return absl::InvalidArgumentError(StrCat("parameters[", key, "] needs parameters[canary.version]"));
      }
    }
  }
  for (const IntegerField& field : integers) {
    auto value = Integer(config, field.key, field.min, field.max);
    if (!value.ok()) return value.status();
    if (*value) field.set(**value);
  }
  for (const NumberField& field : numbers) {
    auto value = Number(config, field.key, field.min, field.max);
    if (!value.ok()) return value.status();
    if (*value) *field.out = **value;
  }
  if (canary.baseline_version == canary.canary_version) {
    return absl::InvalidArgumentError("parameters[canary.baseline_version] equals canary.version");
  }
  return std::optional<CanaryConfig>(canary);
}

CanaryController::CanaryController(CanaryConfig config, int64_t baseline_version)
    : config_(std::move(config)), baseline_version_(baseline_version),
      weight_percent_(config_.weight_percent) {}

bool CanaryController::Route(std::string_view routing_key) const {
  const double weight = weight_percent_.load(std::memory_order_relaxed);
  if (weight <= 0) return false;
  if (weight >= 100) return true;
  if (routing_key.empty()) {
    // A deterministic spread instead of a random draw: the n-th unkeyed request goes
    // to the canary when floor((n + 1) * w) > floor(n * w) (w in hundredths of a
    // percent), so every 10,000 consecutive ones give it exactly w of them, evenly
    // spaced, whatever the thread interleaving.
    const uint64_t w = static_cast<uint64_t>(weight * 100 + 0.5);
    const uint64_t n = unkeyed_count_.fetch_add(1, std::memory_order_relaxed) % 10000;
    return (n + 1) * w / 10000 > n * w / 10000;
  }
  // FNV-1a: stable across processes and builds, so replicas agree on a key's side.
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : routing_key) hash = (hash ^ c) * 1099511628211ull;
  return static_cast<double>(hash % 10000) / 100.0 < weight;
}

void CanaryController::Observe(SteadyTime now, CanarySample baseline, CanarySample canary) {
  absl::MutexLock lock(&mu_);
  history_.push_back({now, std::move(baseline), std::move(canary)});
  while (history_.size() > 2 && history_[1].time <= now - config_.window) history_.pop_front();
  if (state_ != CanaryState::kActive || history_.size() < 2) return;
  const Point& from = history_.front();
  const Point& to = history_.back();
  const uint64_t b_requests = to.baseline.requests - from.baseline.requests;
  const uint64_t c_requests = to.canary.requests - from.canary.requests;
  if (b_requests < static_cast<uint64_t>(config_.min_requests) ||
      c_requests < static_cast<uint64_t>(config_.min_requests)) {
    return;
  }
  const double c_error_rate = 100.0 * (to.canary.errors - from.canary.errors) / c_requests;
  const double b_p99 = LatencyHistogram::Quantile(LatencyHistogram::Subtract(to.baseline.latency, from.baseline.latency), 0.99);
  const double c_p99 = LatencyHistogram::Quantile(LatencyHistogram::Subtract(to.canary.latency, from.canary.latency), 0.99);
  std::string why;
  if (c_error_rate > config_.max_error_rate_percent) {
    why = StrCat("canary error rate ", c_error_rate, "% > ", config_.max_error_rate_percent, "% over ",
                 c_requests, " requests");
  } else if (b_p99 > 0 && c_p99 > b_p99 * (1 + config_.max_p99_increase_percent / 100) &&
             (c_p99 - b_p99) * 1000 > config_.min_p99_increase_ms) {
    why = StrCat("canary P99 ", c_p99 * 1000, " ms > baseline P99 ", b_p99 * 1000, " ms + ",
                 config_.max_p99_increase_percent, "%");
  }
  if (why.empty()) return;
  weight_percent_.store(0, std::memory_order_relaxed);
  state_ = CanaryState::kRolledBack;
  reason_ = why;
  INFERA_LOG(WARNING) << "canary version " << config_.canary_version << " rolled back: " << why;
}

void CanaryController::Promote() {
  absl::MutexLock lock(&mu_);
  weight_percent_.store(100, std::memory_order_relaxed);
  state_ = CanaryState::kPromoted;
  reason_ = "promoted by API";
}

CanaryState CanaryController::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

std::string CanaryController::reason() const {
  absl::MutexLock lock(&mu_);
  return reason_;
}

}  // namespace infera
