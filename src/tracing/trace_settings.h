// TraceSettings: Triton's trace settings (the "trace" extension) and the sampling
// decision they drive, for both transports.
//
// Settings, by Triton's names, each a list of strings on the wire:
//   trace_level    ["OFF"] or ["TIMESTAMPS"]. "TENSORS" is refused: infera's spans carry
//                  stage timestamps (parse, queue, compute, serialize), not tensors.
//   trace_rate     "N": every N-th request without a traceparent is traced (Triton's
//                  meaning); "0": only requests whose W3C traceparent says sampled.
//   trace_count    "N": traces left before tracing stops (counts down); "-1" unlimited.
//   log_frequency  "N" >= 0: kept and reported for Triton's clients; infera exports in
//                  batches every flush interval (OTLP), not every N traces.
//   trace_file     reported as ""; setting it is refused (there is no trace file).
//   trace_mode     "opentelemetry" only (OTLP/HTTP JSON to --trace-endpoint).
//
// A model's settings override the global ones setting by setting; a model setting given
// no value (JSON null, an empty gRPC value list) is cleared and follows the global one
// again; a global setting given no value returns to its value at start (as Triton's). The first update of a model copies nothing: unset settings keep following the
// global ones, as Triton's "use the current global setting" reads.
//
// Sampling (Sample): level OFF traces nothing. Otherwise a request whose traceparent is
// sampled is traced, one whose traceparent is not sampled is not, and one without a
// valid traceparent is traced when it is the rate-th since the last (a counter per
// rate: the model's when it overrides trace_rate, else the global one). Every trace
// started counts down trace_count (the model's when it overrides trace_count), and
// none starts at 0.
//
// Level TIMESTAMPS needs an exporter: without one (no --trace-endpoint) setting it is
// InvalidArgument, so the answer never claims tracing that does not happen.
//
// Thread-safe (one mutex; Sample holds it for a few comparisons).
#ifndef INFERA_TRACING_TRACE_SETTINGS_H_
#define INFERA_TRACING_TRACE_SETTINGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tracing/trace_context.h"

namespace infera {

class TraceSettings {
 public:
  enum class Level { kOff, kTimestamps };

  struct Initial {
    Level level = Level::kOff;
    int64_t rate = 1000;
    int64_t count = -1;
    int64_t log_frequency = 0;
  };

  // setting name -> values, as both transports carry them.
  using Map = std::map<std::string, std::vector<std::string>, std::less<>>;
  // One requested change: a setting and its new values, or nullopt to clear it.
  using Change = std::pair<std::string, std::optional<std::vector<std::string>>>;

  // `exporter` says whether spans have somewhere to go (--trace-endpoint).
  TraceSettings(Initial initial, bool exporter);

  // Maps --trace-rate's fraction P onto Triton's settings: TIMESTAMPS every
  // round(1/P)-th request when an exporter is configured, rate 0 when P is 0.
  static Initial FromFraction(double fraction, bool exporter);

  // The settings in effect for `model` ("" = global), every setting present.
  Map Get(std::string_view model) const;

  // Applies every change or none. InvalidArgument naming the setting: an unknown name,
  // a malformed or out-of-range value, several values for a single-valued setting,
  // TENSORS, TIMESTAMPS without an exporter, trace_file ("trace file location can not be
  // updated through network protocol ..."), a trace_mode other than opentelemetry. Returns Get(model) afterwards.
  absl::StatusOr<Map> Update(std::string_view model, const std::vector<Change>& changes);

  // The trace a request to `model` joins, or nullopt when it is not traced (see above).
  std::optional<TraceContext> Sample(std::string_view model,
                                     std::optional<std::string_view> traceparent);

 private:
  // A setting scope: all set for the global one; a model's only what it overrides.
  struct Scope {
    std::optional<Level> level;
    std::optional<int64_t> rate;
    std::optional<int64_t> count;
    std::optional<int64_t> log_frequency;
    uint64_t seen = 0;  // requests without a traceparent counted against `rate`
  };

  Map GetLocked(std::string_view model) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const bool exporter_;
  Initial start_;  // the global settings at start (what clearing one restores); set once
  mutable absl::Mutex mu_;
  Scope global_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Scope, std::less<>> models_ ABSL_GUARDED_BY(mu_);
};

}  // namespace infera

#endif  // INFERA_TRACING_TRACE_SETTINGS_H_
