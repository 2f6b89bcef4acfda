// The pytorch backend: serves TorchScript models with LibTorch (Triton's
// `platform: "pytorch_libtorch"` / `backend: "pytorch"`).
//
// A model version is `<version_dir>/<default_model_filename or "model.pt">`, a file
// written by torch.jit.save (traced or scripted; not optimised in Python). Config
// inputs bind to forward() by `<name>__<index>` suffix or by argument name; outputs by
// suffix or config order. Parameters, threads, optimisation and zero-copy are described
// in torch_options.h, torch_model.h and docs/torch_backend.md.
//
// This header is LibTorch-free: only the backend's own .cc files include LibTorch.
//
// Usage (server wiring):
//   registry.Register(CreateTorchBackend(), {std::string(kTorchPlatformName)});
//
// Thread-safe: the Backend may load models from several threads at once.
#ifndef INFERA_BACKEND_TORCH_TORCH_BACKEND_H_
#define INFERA_BACKEND_TORCH_TORCH_BACKEND_H_

#include <memory>
#include <string_view>

#include "backend/backend.h"

namespace infera {

inline constexpr std::string_view kTorchBackendName = "pytorch";
inline constexpr std::string_view kTorchPlatformName = "pytorch_libtorch";

std::unique_ptr<Backend> CreateTorchBackend();

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_TORCH_BACKEND_H_
