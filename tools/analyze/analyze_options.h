// AnalyzeOptions: the command line of `infera analyze` (AnalyzeHelpText() lists the
// flags). Every value is checked here, before any server starts: a malformed objective,
// a number out of range, an unknown dimension or precision is an InvalidArgument that
// names the flag (one line; the command adds "see 'infera analyze --help'").
//
// Names follow Triton / perf_analyzer where they exist, as in every infera subcommand:
// --model-repository DIR (--repository accepted, not shown), -m/--model-name (--model
// accepted).
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_ANALYZE_ANALYZE_OPTIONS_H_
#define INFERA_TOOLS_ANALYZE_ANALYZE_OPTIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/analyze/objective.h"
#include "tools/bench/range_spec.h"

namespace infera::analyze {

struct AnalyzeOptions {
  bool help = false;
  std::string repository;
  std::string model;
  Objective objective;
  std::string out;                // default: analyze-<model>
  double time_per_point_s = 3;    // one measurement of a point, [0.2, 600]
  int repeats = 3;                // measurements per point, [1, 20]
  bool allow_api_change = false;  // the batch dimension may lower max_batch_size
  int max_points = 40;            // [1, 1000]
  bench::RangeSpec concurrency;   // default 1:16:x2
  double min_gain_pct = 5;        // [0, 1000]
  int patience = 1;               // [0, 10]
  int64_t max_queue_delay_us = 2000;  // [100, 10'000'000]
  int max_instances = 0;          // 0: the machine's cores
  std::vector<std::string> dimensions;  // empty: all (dimensions.h)
  // Values of the precision dimension (pytorch models only); fp16 is not in the default:
  // LibTorch 1.13 has no CPU half kernels for convolutions or Linear (docs/optimisation.md).
  std::vector<std::string> precisions = {"fp32", "bf16", "int8_dynamic"};
  std::string binary;             // default: this executable
  bool baseline = false;          // also measure the model's own config first
};

absl::StatusOr<AnalyzeOptions> ParseAnalyzeOptions(const std::vector<std::string>& args);
std::string AnalyzeHelpText();

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_ANALYZE_OPTIONS_H_
