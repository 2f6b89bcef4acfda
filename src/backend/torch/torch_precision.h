// The LibTorch side of PRECISION (docs/optimisation.md): converting a loaded module to
// the precision a config asks for, and the int8 dynamic rewrite of its Linear layers.
//
// Included only by the backend's .cc files, after LibTorch's headers; it forward-declares
// torch::jit::Module so that it stays free of LibTorch includes itself.
//
// Thread-safe: functions of their arguments; SelectQuantizedEngine sets a process-wide
// LibTorch setting once.
#ifndef INFERA_BACKEND_TORCH_TORCH_PRECISION_H_
#define INFERA_BACKEND_TORCH_TORCH_PRECISION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "backend/torch/torch_options.h"

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace infera {

// Picks LibTorch's quantised engine once per process: x86, fbgemm, onednn, qnnpack —
// the first this build supports (Debian's 1.13: onednn). Returns its name; an error
// when the build has none.
absl::StatusOr<std::string> SelectQuantizedEngine();

// In `frozen` (a torch::jit::freeze result), replaces every aten::linear whose weight is a
// constant 2-D fp32 tensor (and whose bias is a constant or None) by
// quantized::linear_dynamic over weights quantised per output channel (symmetric int8,
// scale = max|row| / 127) and prepacked once here. Returns how many were replaced (0: the
// module has no such layer). REQUIRES: SelectQuantizedEngine() succeeded.
// Errors (Internal) are LibTorch's, e.g. a prepack the engine refuses.
absl::StatusOr<int> QuantizeLinearDynamic(torch::jit::Module& frozen);

// The smallest row count of a constant aten::embedding / embedding_bag table in the
// module's forward graph (a frozen module's), capped at `cap`; `cap` when there is none.
// Validation draws integer inputs below it so that ids stay valid.
int64_t SmallestEmbeddingRows(const torch::jit::Module& module, int64_t cap = 1000);

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_TORCH_PRECISION_H_
