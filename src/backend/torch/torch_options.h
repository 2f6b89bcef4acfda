// TorchModelOptions: the pytorch backend's reading of a model config — its
// `parameters`, its model file name and the datatypes LibTorch can carry.
//
// Parameters (`parameters { key: "K" value: { string_value: "V" } }`), Triton's names
// where Triton has them:
//   INTRA_OP_THREAD_COUNT        integer in [0, 4 x cores]; > 0 overrides the instance's
//                                thread budget (InstanceOptions::intra_op_threads), 0 keeps it.
//   INFERENCE_MODE               bool, default true: c10::InferenceMode during Execute
//                                (else torch::NoGradGuard).
//   DISABLE_OPTIMIZED_EXECUTION  bool, default false: turns the TorchScript graph
//                                executor's optimisations off (thread-local flag, set
//                                around each Execute).
//   OPTIMIZE_FOR_INFERENCE       bool, default true (infera's own): after loading,
//                                torch::jit::freeze + torch::jit::optimize_for_inference;
//                                on failure the plain module is used (with a warning).
//   ENABLE_WEIGHT_SHARING        bool, default true: instances share one module; false
//                                loads (and optimises) the file once per instance, as
//                                Triton does by default.
//   PRECISION                    fp32 (default) | bf16 | fp16 | int8_dynamic (infera's own):
//                                the arithmetic the module runs in, applied at load
//                                (docs/optimisation.md). bf16/fp16 convert the weights and
//                                cast floating inputs/outputs at the boundary; int8_dynamic
//                                rewrites Linear layers to quantized::linear_dynamic.
//   VALIDATE_PRECISION           bool, default false: at load, compare the chosen precision
//                                with fp32 on a fixed seeded input set.
//   PRECISION_MIN_COSINE         float in [0, 1], default 0.99; needs VALIDATE_PRECISION.
//   PRECISION_MIN_TOP1_AGREEMENT float in [0, 1], default 0 (report only: the shape cannot
//                                tell a classifier from an embedding); needs VALIDATE_PRECISION.
//                                Below either floor the load fails.
//   GRAPH_EXECUTOR               auto (default) | simple | profiling (infera's own): the
//                                TorchScript executor of the module's methods. `profiling`
//                                is LibTorch's default: the first run records shapes, the
//                                second optimises the graph again (specialisation, fusion
//                                where a fuser exists) and runs the result. `simple` runs
//                                the graph as loaded from the first call. `auto`: simple for
//                                a frozen module (OPTIMIZE_FOR_INFERENCE applied, or
//                                int8_dynamic), profiling otherwise — a frozen,
//                                optimised graph gains nothing from the second compilation
//                                on CPU (the same graph; LibTorch 1.13 has no CPU fuser
//                                without LLVM), only a slower first run (docs/cold_start.md).
// Bools accept true/false, 1/0, yes/no, on/off (any case). A value that does not parse
// is an InvalidArgument naming the key. Keys this backend does not use are reported in
// `ignored_keys` (the loader logs them) rather than rejected, so Triton repositories
// with GPU-only switches (ENABLE_NVFUSER, ...) still load.
//
// Thread-safe: pure functions.
#ifndef INFERA_BACKEND_TORCH_TORCH_OPTIONS_H_
#define INFERA_BACKEND_TORCH_TORCH_OPTIONS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/data_type.h"
#include "model_config.pb.h"
#include "repository/config_limits.h"

namespace infera {

enum class Precision { kFp32, kBf16, kFp16, kInt8Dynamic };

enum class GraphExecutor { kAuto, kSimple, kProfiling };

// "auto", "simple", "profiling".
std::string_view GraphExecutorName(GraphExecutor executor);

// "fp32", "bf16", "fp16", "int8_dynamic".
std::string_view PrecisionName(Precision precision);

struct TorchModelOptions {
  int intra_op_threads = 0;  // 0: use InstanceOptions::intra_op_threads
  bool inference_mode = true;
  bool disable_optimized_execution = false;
  bool optimize_for_inference = true;
  bool share_weights = true;
  Precision precision = Precision::kFp32;
  bool validate_precision = false;
  double min_cosine = 0.99;
  double min_top1_agreement = 0.0;
  GraphExecutor graph_executor = GraphExecutor::kAuto;
  // config.default_model_filename, or "model.pt"; a plain file name.
  std::string model_filename = "model.pt";
  std::vector<std::string> ignored_keys;  // sorted
};

// Reads the parameters and the model file name. Errors name the offending key/field;
// the thread count is bounded by `machine`'s cores.
absl::StatusOr<TorchModelOptions> ParseTorchModelOptions(
    const inference::ModelConfig& config, const MachineLimits& machine = MachineLimits::Current());

// All of the backend's config checks: at least one input and one output, every
// datatype one LibTorch 1.13 has (UINT16/32/64 and STRING are not), no shape tensors,
// and ParseTorchModelOptions. Errors name the tensor or key.
absl::Status ValidateTorchConfig(const inference::ModelConfig& config,
                                 const MachineLimits& machine = MachineLimits::Current());

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_TORCH_OPTIONS_H_
