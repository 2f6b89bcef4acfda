// RangeSpec: the START:END[:STEP] sweeps of --concurrency-range and
// --request-rate-range (perf_analyzer's syntax, extended with geometric steps).
//
//   "8"            one level: 8
//   "1:64"         1, 2, 3, ..., 64                (perf_analyzer: step 1)
//   "1:64:8"       1, 9, 17, ..., 57               (a plain STEP is additive, as in
//   "1:64:+8"      the same                         perf_analyzer)
//   "1:64:x2"      1, 2, 4, 8, 16, 32, 64          (geometric; also "*2")
//   "100:400:x1.5" 100, 150, 225, 337.5
//
// END is included when a step lands on it (up to a 1e-9 relative rounding slack) and
// never exceeded. Values must be > 0, END >= START, an additive step > 0, a factor > 1;
// a sweep may have at most kMaxRangeLevels levels. Errors are InvalidArgument naming the
// problem.
//
// Thread-safe (pure functions).
//
// Usage:
//   ASSIGN_OR_RETURN(RangeSpec range, ParseRangeSpec("1:64:x2"));
//   for (double level : range.Levels()) ...
#ifndef INFERA_TOOLS_BENCH_RANGE_SPEC_H_
#define INFERA_TOOLS_BENCH_RANGE_SPEC_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::bench {

constexpr int kMaxRangeLevels = 1000;

struct RangeSpec {
  enum class StepKind { kAdd, kMultiply };
  double start = 1;
  double end = 1;
  StepKind step_kind = StepKind::kAdd;
  double step = 1;

  std::vector<double> Levels() const;
  // Canonical text, e.g. "1:64:x2".
  std::string ToString() const;
};

absl::StatusOr<RangeSpec> ParseRangeSpec(std::string_view text);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_RANGE_SPEC_H_
