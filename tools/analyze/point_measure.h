// One configuration point of `infera analyze`: load the model with the point's config
// (a repository load override on the analyzer's own server), then measure it with the
// bench engine in this process (bench_command.h's RunKServeSweep) `repeats` times and
// reduce the sweeps to the objective (objective.h's noise rule). A fifth of the point's
// time first runs the load at the sweep's highest concurrency and is discarded (the
// backend settles: shape-specialised compilation after a load); then each repeat is
// measured for `time_per_point_s`:
//
//   max-throughput:pNN<=X  closed-loop concurrency sweep (`concurrency`), the time split
//                          evenly over the levels (a quarter of each level is warm-up),
//                          stopping at the first level whose pNN exceeds X. Per level,
//                          the repeats give a spread of pNN; the level's verdict is the
//                          noise rule on it against X (a repeat with errors, or one that
//                          stopped before the level, counts as beyond the bound). The
//                          point's verdict is its best level's; score = that level's
//                          median throughput.
//   min-latency:rate>=Y    open loop, constant arrivals at kRateHeadroom x Y req/s (a
//                          quarter warm-up): a configuration that keeps up then measures
//                          clearly above Y, one that only just keeps up at Y does not. The
//                          verdict is the noise rule on the achieved rates (errors count as
//                          0) against Y; score = median pNN in ms.
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
#include <vector>

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
  double time_per_point_s = 3;    // one repeat
  int repeats = 3;
  bench::RangeSpec concurrency;  // the closed-loop sweep
  int server_pid = 0;            // for CPU per request; 0: not measured
  int load_timeout_ms = 300000;
};

// POSTs the load with `override_body` (config_render.h). OK, or the refusal: Unavailable
// when the server cannot be reached, FailedPrecondition carrying the server's message
// for a refused load.
absl::Status LoadWithOverride(const MeasureSettings& settings, const std::string& override_body);

// Reduces the repeated sweeps of one point to the objective's figures and verdict
// (pure; unit-tested).
PointResult ReduceSweeps(const Objective& objective, const std::vector<bench::RunReport>& reports);

// Loads and measures one point. `stop` ends the measurement early.
PointResult MeasurePoint(const MeasureSettings& settings, const std::string& override_body,
                         const std::atomic<bool>& stop);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_POINT_MEASURE_H_
