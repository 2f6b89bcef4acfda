// One configuration point of `infera analyze`: load the model with the point's config
// (a repository load override on the analyzer's own server), then measure it with the
// bench engine in this process (bench_command.h's RunKServeSweep) and reduce the sweep
// to the objective (objective.h). A fifth of the point's time first runs the load at the
// sweep's highest concurrency and is discarded (the backend settles: shape-specialised
// compilation after a load); the rest is measured:
//
//   max-throughput:pNN<=X  closed-loop concurrency sweep (`concurrency`), the point's
//                          time split evenly over the levels (a quarter of each level
//                          is warm-up), stopping at the first level whose pNN exceeds X;
//                          score = the best throughput among levels within X.
//   min-latency:rate>=Y    open loop, constant arrivals at Y req/s for the point's time
//                          (a quarter warm-up); met when the achieved throughput is
//                          >= 0.95 Y without errors; score = pNN in ms.
//
// A refused load (or a measurement that got no answer) is a PointResult with
// loaded = false and the reason.
//
// Thread-compatible.
#ifndef INFERA_TOOLS_ANALYZE_POINT_MEASURE_H_
#define INFERA_TOOLS_ANALYZE_POINT_MEASURE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "tools/analyze/objective.h"
#include "tools/bench/range_spec.h"
#include "tools/bench/run_report.h"

namespace infera::analyze {

struct MeasureSettings {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string model;
  Objective objective;
  double time_per_point_s = 5;
  bench::RangeSpec concurrency;  // the closed-loop sweep
  int server_pid = 0;            // for CPU per request; 0: not measured
  int load_timeout_ms = 300000;
};

// POSTs the load with `override_body` (config_render.h). OK, or the refusal: Unavailable
// when the server cannot be reached, FailedPrecondition carrying the server's message
// for a refused load.
absl::Status LoadWithOverride(const MeasureSettings& settings, const std::string& override_body);

// Reduces a bench sweep to the objective's figures (pure; unit-tested).
PointResult ReduceSweep(const Objective& objective, const bench::RunReport& report);

// Loads and measures one point. `stop` ends the measurement early.
PointResult MeasurePoint(const MeasureSettings& settings, const std::string& override_body,
                         const std::atomic<bool>& stop);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_POINT_MEASURE_H_
