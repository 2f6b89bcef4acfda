#include "tracing/trace_settings.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/str_cat.h"

namespace infera {
namespace {

constexpr std::string_view kLevel = "trace_level";
constexpr std::string_view kRate = "trace_rate";
constexpr std::string_view kCount = "trace_count";
constexpr std::string_view kLogFrequency = "log_frequency";
constexpr std::string_view kFile = "trace_file";
constexpr std::string_view kMode = "trace_mode";
constexpr std::string_view kKnown =
    "trace_level, trace_rate, trace_count, log_frequency, trace_file, trace_mode";

absl::StatusOr<std::string_view> Single(std::string_view name, const std::vector<std::string>& values) {
  if (values.size() != 1) {
    return absl::InvalidArgumentError(
        StrCat("trace setting '", name, "' takes exactly one value, got ", values.size()));
  }
  return std::string_view(values[0]);
}

// Triton keeps these settings in 32-bit integers: a larger value is out of range.
constexpr int64_t kMaxSetting = 2147483647;

absl::StatusOr<int64_t> ParseInteger(std::string_view name, const std::vector<std::string>& values,
                                     int64_t min) {
  absl::StatusOr<std::string_view> value = Single(name, values);
  if (!value.ok()) return value.status();
  int64_t parsed = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
  if (value->empty() || ec != std::errc() || end != value->data() + value->size() || parsed < min ||
      parsed > kMaxSetting) {
    return absl::InvalidArgumentError(StrCat("trace setting '", name, "' must be an integer in [", min, ", ",
                                             kMaxSetting, "], got '", *value, "'"));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<uint8_t> TraceSettings::ParseLevel(const std::vector<std::string>& values, bool exporter,
                                                  Mode mode) {
  if (values.empty()) return absl::InvalidArgumentError("trace setting 'trace_level' needs a value");
  uint8_t level = Level::kOff;
  for (const std::string& value : values) {
    if (value == "OFF") continue;
    if (value == "TIMESTAMPS") {
      level |= Level::kTimestamps;
    } else if (value == "TENSORS") {
      if (mode != Mode::kTriton) {
        return absl::InvalidArgumentError(
            "trace_level TENSORS is not supported in trace_mode opentelemetry: infera's OTLP spans "
            "carry stage timestamps, not tensors (use TIMESTAMPS, or a trace file: --trace-config "
            "triton,file=PATH)");
      }
      level |= Level::kTensors;
    } else {
      return absl::InvalidArgumentError(
          StrCat("unknown trace_level '", value, "' (OFF, TIMESTAMPS or TENSORS)"));
    }
  }
  if (level != Level::kOff && !exporter) {
    return absl::InvalidArgumentError(
        "trace_level TIMESTAMPS or TENSORS needs somewhere to write traces: start infera with "
        "--trace-config triton,file=PATH (or --trace-file) or --trace-endpoint");
  }
  return level;
}

namespace {

std::vector<std::string> LevelNames(uint8_t level) {
  if (level == TraceSettings::Level::kOff) return {"OFF"};
  std::vector<std::string> names;
  if (level & TraceSettings::Level::kTimestamps) names.emplace_back("TIMESTAMPS");
  if (level & TraceSettings::Level::kTensors) names.emplace_back("TENSORS");
  return names;
}

std::string_view ModeName(TraceSettings::Mode mode) {
  return mode == TraceSettings::Mode::kTriton ? "triton" : "opentelemetry";
}

}  // namespace

TraceSettings::TraceSettings(Initial initial, bool exporter) : TraceSettings(initial, exporter, Output()) {}

TraceSettings::TraceSettings(Initial initial, bool exporter, Output output)
    : exporter_(exporter), output_(std::move(output)) {
  if (!exporter) initial.level = Level::kOff;
  if (output_.mode != Mode::kTriton) initial.level &= ~Level::kTensors;
  start_ = initial;
  global_.level = initial.level;
  global_.rate = initial.rate;
  global_.count = initial.count;
  global_.log_frequency = initial.log_frequency;
}

TraceSettings::Initial TraceSettings::FromFraction(double fraction, bool exporter) {
  Initial initial;
  initial.level = exporter ? Level::kTimestamps : Level::kOff;
  initial.rate = fraction > 0 ? std::max<int64_t>(1, std::llround(1.0 / fraction)) : 0;
  return initial;
}

TraceSettings::Map TraceSettings::Get(std::string_view model) const {
  absl::ReaderMutexLock lock(&mu_);
  return GetLocked(model);
}

TraceSettings::Map TraceSettings::GetLocked(std::string_view model) const {
  const Scope* m = nullptr;
  if (!model.empty()) {
    auto it = models_.find(model);
    if (it != models_.end()) m = &it->second;
  }
  const uint8_t level = m != nullptr && m->level ? *m->level : *global_.level;
  const int64_t rate = m != nullptr && m->rate ? *m->rate : *global_.rate;
  const int64_t count = m != nullptr && m->count ? *m->count : *global_.count;
  const int64_t log_frequency = m != nullptr && m->log_frequency ? *m->log_frequency : *global_.log_frequency;
  Map map;
  map.emplace(std::string(kLevel), LevelNames(level));
  map.emplace(std::string(kRate), std::vector<std::string>{std::to_string(rate)});
  map.emplace(std::string(kCount), std::vector<std::string>{std::to_string(count)});
  map.emplace(std::string(kLogFrequency), std::vector<std::string>{std::to_string(log_frequency)});
  map.emplace(std::string(kFile), std::vector<std::string>{output_.file});
  map.emplace(std::string(kMode), std::vector<std::string>{std::string(ModeName(output_.mode))});
  return map;
}

absl::StatusOr<TraceSettings::Map> TraceSettings::Update(std::string_view model,
                                                         const std::vector<Change>& changes) {
  // Parsed first, applied after, so that a bad change leaves every setting as it was.
  Scope parsed;
  std::vector<std::string_view> cleared;
  for (const auto& [name, values] : changes) {
    const bool clear = !values.has_value() || values->empty();
    if (name != kLevel && name != kRate && name != kCount && name != kLogFrequency && name != kFile &&
        name != kMode) {
      return absl::InvalidArgumentError(StrCat("unknown trace setting '", name, "' (known: ", kKnown, ")"));
    }
    if (clear) {  // a model's follows the global one again; a global one its start value
      cleared.push_back(name);
      continue;
    }
    if (name == kLevel) {
      absl::StatusOr<uint8_t> level = ParseLevel(*values, exporter_, output_.mode);
      if (!level.ok()) return level.status();
      parsed.level = *level;
    } else if (name == kRate) {
      absl::StatusOr<int64_t> rate = ParseInteger(name, *values, 0);
      if (!rate.ok()) return rate.status();
      parsed.rate = *rate;
    } else if (name == kCount) {
      absl::StatusOr<int64_t> count = ParseInteger(name, *values, -1);
      if (!count.ok()) return count.status();
      parsed.count = *count;
    } else if (name == kLogFrequency) {
      absl::StatusOr<int64_t> frequency = ParseInteger(name, *values, 0);
      if (!frequency.ok()) return frequency.status();
      parsed.log_frequency = *frequency;
    } else if (name == kFile) {
      // Triton's text. A client must not choose where the server writes: the file is
      // the operator's (--trace-config triton,file=PATH).
      return absl::InvalidArgumentError(
          "trace file location can not be updated through network protocol (the trace file "
          "is set at start: --trace-config triton,file=PATH)");
    } else {  // kMode
      absl::StatusOr<std::string_view> mode = Single(name, *values);
      if (!mode.ok()) return mode.status();
      if (*mode != ModeName(output_.mode)) {
        return absl::InvalidArgumentError(
            StrCat("trace_mode can not be updated through network protocol: infera traces in mode '",
                   ModeName(output_.mode), "' (chosen at start: --trace-config mode=...), not '", *mode, "'"));
      }
    }
  }
  absl::MutexLock lock(&mu_);
  Scope& scope = model.empty() ? global_ : models_[std::string(model)];
  // Clearing: a model's setting is unset (follows the global one); a global setting
  // returns to its start value (Triton's trace_endpoint_test resets so).
  const bool global = model.empty();
  for (std::string_view name : cleared) {
    if (name == kLevel) scope.level = global ? std::optional<uint8_t>(start_.level) : std::nullopt;
    if (name == kRate) {
      scope.rate = global ? std::optional<int64_t>(start_.rate) : std::nullopt;
      scope.seen = 0;
    }
    if (name == kCount) scope.count = global ? std::optional<int64_t>(start_.count) : std::nullopt;
    if (name == kLogFrequency) scope.log_frequency = global ? std::optional<int64_t>(start_.log_frequency) : std::nullopt;
  }
  if (parsed.level) scope.level = parsed.level;
  if (parsed.rate) {
    scope.rate = parsed.rate;
    scope.seen = 0;  // a new rate starts a new count
  }
  if (parsed.count) scope.count = parsed.count;
  if (parsed.log_frequency) scope.log_frequency = parsed.log_frequency;
  if (!model.empty() && !scope.level && !scope.rate && !scope.count && !scope.log_frequency) {
    models_.erase(models_.find(model));  // follows the global settings entirely again
  }
  return GetLocked(model);
}

std::optional<TraceContext> TraceSettings::Sample(std::string_view model,
                                                  std::optional<std::string_view> traceparent) {
  std::optional<Sampled> sampled = SampleTrace(model, traceparent);
  if (!sampled) return std::nullopt;
  return sampled->context;
}

std::optional<TraceSettings::Sampled> TraceSettings::SampleTrace(std::string_view model,
                                                                 std::optional<std::string_view> traceparent) {
  // Triton's mode ignores W3C trace context: rate and count alone decide.
  std::optional<TraceContext> parent;
  if (traceparent && output_.mode == Mode::kOpenTelemetry) parent = ParseTraceparent(*traceparent);
  absl::MutexLock lock(&mu_);
  Scope* m = nullptr;
  if (!models_.empty()) {
    auto it = models_.find(model);
    if (it != models_.end()) m = &it->second;
  }
  const uint8_t level = m != nullptr && m->level ? *m->level : *global_.level;
  if (level == Level::kOff) return std::nullopt;
  Scope& count_scope = m != nullptr && m->count ? *m : global_;
  if (*count_scope.count == 0) return std::nullopt;
  if (parent) {
    if (!parent->sampled) return std::nullopt;
  } else {
    Scope& rate_scope = m != nullptr && m->rate ? *m : global_;
    if (*rate_scope.rate == 0) return std::nullopt;
    // Triton's count: the rate-th request is the first traced (counter incremented first).
    if (++rate_scope.seen % static_cast<uint64_t>(*rate_scope.rate) != 0) return std::nullopt;
  }
  if (*count_scope.count > 0) --*count_scope.count;
  Sampled sampled;
  sampled.timestamps = (level & Level::kTimestamps) != 0;
  sampled.tensors = (level & Level::kTensors) != 0;
  sampled.log_frequency = m != nullptr && m->log_frequency ? *m->log_frequency : *global_.log_frequency;
  if (parent) {
    sampled.context = *parent;
  } else {
    sampled.context.trace_id = NewTraceId();
    sampled.context.sampled = true;
  }
  return sampled;
}

}  // namespace infera
