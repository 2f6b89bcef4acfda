// Correctness checks for --check: the expected outputs of a payload, and the comparison
// of a response's outputs against them.
//
// Expected outputs come from the input data file's "validation_data" when it has one,
// else from a built-in reference for infera's test backends (platform from metadata):
//   add_sub   the first output = INPUT0 + INPUT1, the second = INPUT0 - INPUT1
//             (integers wrap, as Triton's "simple" model and infera's add_sub do);
//   identity  output i = input i.
// Other models need validation data (a missing reference is an error before the run,
// not a silent pass).
//
// Comparison: every expected output must be present with the same datatype and shape
// (a shape of {-1} means "unknown": only the element count is compared); integers,
// BOOL and BYTES exactly; floats within atol + rtol * |expected| (NaN equals NaN).
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_RESPONSE_CHECKER_H_
#define INFERA_TOOLS_BENCH_RESPONSE_CHECKER_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "tools/bench/model_metadata.h"

namespace infera::bench {

absl::StatusOr<std::vector<Tensor>> BuiltinReferenceOutputs(std::string_view platform,
                                                            const std::vector<TensorSpec>& outputs,
                                                            const std::vector<Tensor>& inputs);

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

// OK, or InvalidArgument naming the first difference ("OUTPUT0[3] is 7, expected 8").
absl::Status CompareOutputs(const std::vector<Tensor>& expected, const std::vector<Tensor>& actual,
                            Tolerance tolerance = {});

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_RESPONSE_CHECKER_H_
