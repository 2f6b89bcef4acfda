// Binding config tensors to a TorchScript forward(): which argument position each
// config input feeds, and which returned value each config output is.
//
// Rules (those of Triton's PyTorch backend):
//   inputs   - if EVERY config input is named `<prefix>__<index>` (INPUT__0, x__1), the
//              index is the forward() argument position (self excluded);
//            - otherwise each config input name must equal a forward() argument name.
//            Every forward() argument without a default must be fed by some input.
//   outputs  - if EVERY config output is named `<prefix>__<index>`, the index selects the
//              element of the returned tuple/list (the model may return more values
//              than the config declares);
//            - otherwise outputs are taken in config order and the model must return
//              exactly as many values as the config declares.
//
// Torch-free (the loader extracts the argument list from the method schema), so the
// rules are tested without LibTorch. Thread-safe: pure functions.
#ifndef INFERA_BACKEND_TORCH_IO_BINDING_H_
#define INFERA_BACKEND_TORCH_IO_BINDING_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model_config.pb.h"

namespace infera {

// One forward() argument, self excluded.
struct ForwardArgument {
  std::string name;
  bool has_default = false;
  bool accepts_tensor = true;  // its type is Tensor or Optional[Tensor]
};

struct InputBinding {
  // position[i]: the forward() argument fed by config input i.
  std::vector<int> position;
  bool by_index = false;  // true: positions came from `__<index>` suffixes
};

struct OutputBinding {
  // index[i]: the returned value that becomes config output i.
  std::vector<int> index;
  bool by_index = false;  // false: config order, returned count must match exactly
};

// The index of a `<prefix>__<index>` name ("INPUT__2" -> 2); nullopt when the name does
// not end in "__" followed by decimal digits.
std::optional<int> IndexSuffix(std::string_view name);

// Binds config inputs to `arguments`. Errors name the unmatched input or the argument
// no input feeds.
absl::StatusOr<InputBinding> BindInputs(const inference::ModelConfig& config,
                                        const std::vector<ForwardArgument>& arguments);

// Binds config outputs to returned values. Errors name clashing outputs.
absl::StatusOr<OutputBinding> BindOutputs(const inference::ModelConfig& config);

// Checks that a model returning `returned` values satisfies `binding`; the error
// (Internal: the model's fault, not the client's) names the first config output
// without a value.
absl::Status CheckReturnedCount(const OutputBinding& binding,
                                const inference::ModelConfig& config, size_t returned);

// "(x, y)" for error messages.
std::string DescribeArguments(const std::vector<ForwardArgument>& arguments);

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_IO_BINDING_H_
