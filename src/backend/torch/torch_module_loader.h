// LoadModule: a TorchScript file onto the CPU, in eval mode, at the configured precision,
// optimised when asked (freeze + optimize_for_inference), on the executor the options
// choose — the pytorch backend's load path (docs/torch_backend.md, docs/cold_start.md).
// The file is memory-mapped and deserialised from memory (a zip archive), or read by
// name otherwise.
//
// Callers include <torch/script.h> first (the result type is LibTorch's).
//
// Thread-safe (no shared state).
#ifndef INFERA_BACKEND_TORCH_TORCH_MODULE_LOADER_H_
#define INFERA_BACKEND_TORCH_TORCH_MODULE_LOADER_H_

#include <filesystem>

#include "absl/status/statusor.h"
#include "backend/load_timings.h"
#include "backend/torch/torch_options.h"

namespace torch::jit {
struct Module;  // LibTorch's; its headers stay in the .cc files (CMakeLists.txt says why)
}  // namespace torch::jit

namespace infera {

// What LoadModule did, for the load log and the config answer.
struct LoadFacts {
  bool optimized = false;     // optimize_for_inference applied
  int quantized_layers = -1;  // int8_dynamic: Linear layers rewritten; else -1
  bool simple_executor = false;  // the methods run on LibTorch's simple graph executor
};

// Loads `path` (see the file comment); `facts` (may be null) reports what was done,
// `timings` (may be null) the stages "read", "deserialise" and "optimise". Errors name
// the file: NotFound when it does not exist, InvalidArgument when it is no TorchScript.
absl::StatusOr<torch::jit::Module> LoadModule(const std::filesystem::path& path, const TorchModelOptions& options,
                                              LoadFacts* facts, LoadTimings* timings = nullptr);

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_TORCH_MODULE_LOADER_H_
