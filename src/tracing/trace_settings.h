// TraceSettings: Triton's trace settings (the "trace" extension) and the sampling
// decision they drive, for both transports.
//
// Two modes, chosen at start (Output) and read back as trace_mode:
//   triton         Triton's JSON trace objects written to the trace file
//                  (tracing/trace_file_writer.h); W3C traceparents are ignored.
//   opentelemetry  OTLP/HTTP JSON spans to --trace-endpoint (tracing/tracer.h).
//
// Settings, by Triton's names, each a list of strings on the wire:
//   trace_level    ["OFF"], or any of "TIMESTAMPS", "TENSORS" (read back in that order).
//                  TENSORS only in triton mode (the file gets the tensors' values); OTLP
//                  spans carry stage timestamps only.
//   trace_rate     "N": the N-th, 2N-th, ... request is traced (Triton's count: the
//                  counter is incremented first); "0": none by rate (opentelemetry mode:
//                  only requests whose W3C traceparent says sampled).
//   trace_count    "N": traces left before tracing stops (counts down); "-1" unlimited.
//   log_frequency  "N" >= 0: triton mode writes every N traces to a file of their own
//                  (trace_file.0, .1, ...); 0: all in trace_file. OTLP: no effect.
//   trace_file     the file named at start ("" in opentelemetry mode); not settable over
//                  the network ("trace file location can not be updated through network
//                  protocol", Triton's text): a client must not choose where the server
//                  writes. Clearing it (null) is accepted and changes nothing.
//   trace_mode     the start mode; setting the same mode is accepted, another refused.
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
// A level other than OFF needs an exporter (--trace-endpoint, or a trace file in triton
// mode): without one setting it is InvalidArgument, so the answer never claims tracing
// that does not happen.
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
  // Level bits: a level is a set of them (kOff: none).
  enum Level : uint8_t { kOff = 0, kTimestamps = 1, kTensors = 2 };
  enum class Mode { kTriton, kOpenTelemetry };

  struct Initial {
    uint8_t level = Level::kOff;  // Level bits
    int64_t rate = 1000;
    int64_t count = -1;
    int64_t log_frequency = 0;
  };

  // setting name -> values, as both transports carry them.
  using Map = std::map<std::string, std::vector<std::string>, std::less<>>;
  // One requested change: a setting and its new values, or nullopt to clear it.
  using Change = std::pair<std::string, std::optional<std::vector<std::string>>>;

  // Where traces go, read back as trace_mode and trace_file.
  struct Output {
    Mode mode = Mode::kOpenTelemetry;
    std::string file;  // triton mode's trace file ("" none)
  };

  // What Sample decided for a traced request.
  struct Sampled {
    TraceContext context;
    bool timestamps = true;   // level TIMESTAMPS
    bool tensors = false;     // level TENSORS (triton mode)
    int64_t log_frequency = 0;  // the model's (or global) log_frequency
  };

  // `exporter` says whether traces have somewhere to go (--trace-endpoint or a file).
  TraceSettings(Initial initial, bool exporter, Output output);
  TraceSettings(Initial initial, bool exporter);  // opentelemetry mode

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
  // The same decision, with what the trace records.
  std::optional<Sampled> SampleTrace(std::string_view model,
                                     std::optional<std::string_view> traceparent);

  Mode mode() const { return output_.mode; }

 private:
  // A setting scope: all set for the global one; a model's only what it overrides.
  struct Scope {
    std::optional<uint8_t> level;
    std::optional<int64_t> rate;
    std::optional<int64_t> count;
    std::optional<int64_t> log_frequency;
    uint64_t seen = 0;  // requests without a traceparent counted against `rate`
  };

  Map GetLocked(std::string_view model) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // trace_level's values as Level bits; InvalidArgument for what `mode` cannot honour.
  static absl::StatusOr<uint8_t> ParseLevel(const std::vector<std::string>& values, bool exporter, Mode mode);

  const bool exporter_;
  const Output output_;
  Initial start_;  // the global settings at start (what clearing one restores); set once
  mutable absl::Mutex mu_;
  Scope global_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Scope, std::less<>> models_ ABSL_GUARDED_BY(mu_);
};

}  // namespace infera

#endif  // INFERA_TRACING_TRACE_SETTINGS_H_
