// LoadTorchModel: one loaded TorchScript version and its execution instances — the
// LibTorch side of the pytorch backend (torch_backend.h is the entry point).
//
// Load:  <version_dir>/<model_filename> is mapped into memory (pages populated), deserialised
//        from there with torch::jit::load onto the CPU (a file that is not a zip archive,
//        or fails, is loaded by name instead, for the same error) and put in eval mode;
//        with OPTIMIZE_FOR_INFERENCE it is frozen and passed through
//        torch::jit::optimize_for_inference (a failure there logs a warning and keeps the
//        plain module). Inputs/outputs are bound to forward() once (io_binding.h).
//        PRECISION (docs/optimisation.md): bf16/fp16 convert the weights (4-D ones
//        channels-last) before freezing; int8_dynamic freezes and rewrites Linear layers
//        (torch_precision.h). A non-fp32 precision then gets a trial run, a measured
//        speed-up over a second, fp32 load of the file and, with VALIDATE_PRECISION, the
//        accuracy figures and floors (precision_probe.h); any failure fails the load.
//        The results are the LoadedModel's ReportedParameters(). The stages ("read",
//        "deserialise", "optimise", "precision probe") go to ModelLoadContext::timings.
//        GRAPH_EXECUTOR (torch_options.h) picks the module's TorchScript executor before
//        its first call: by default the simple one for a frozen module, LibTorch's
//        profiling one otherwise; the load log line names it.
// Instances: share the loaded module (TorchScript methods may run concurrently from
//        several threads) unless ENABLE_WEIGHT_SHARING is false, in which case every
//        instance after the first loads and optimises its own copy.
// Execute: on the calling worker thread, which gets the instance's intra-op thread
//        budget (at::set_num_threads is per calling thread with this LibTorch's OpenMP
//        pool; see docs/torch_backend.md), under c10::InferenceMode (or NoGradGuard) and
//        with DISABLE_OPTIMIZED_EXECUTION applied (a thread-local executor flag). Inputs
//        and outputs are not copied (torch_tensor.h), except at a bf16/fp16 boundary:
//        floating inputs are cast to the compute dtype, floating outputs back to the
//        config's dtype. With `--cpu-placement pinned` (docs/cpu_placement.md) the
//        instance reserves one CPU per intra-op thread when it is created, and its first
//        execution that is not a warm-up (ExecutionContext::is_warmup: the scheduler's
//        worker; the loader's warm-up runs and probes are warm-ups) pins that thread and its OpenMP team there
//        (torch_pinning.h). Every LibTorch exception becomes a
//        Status; none escapes. A model's own fault (an exception in forward(), outputs
//        of the wrong count, type or dtype) is Internal, never InvalidArgument.
//
// Thread-safety: the LoadedModel is thread-safe; each ModelInstance is owned by one
// worker thread (ModelInstance's contract).
#ifndef INFERA_BACKEND_TORCH_TORCH_MODEL_H_
#define INFERA_BACKEND_TORCH_TORCH_MODEL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "backend/backend.h"
#include "backend/torch/torch_options.h"

namespace infera {

// REQUIRES: `context.config` passed ValidateTorchConfig and `options` was parsed from it.
// Errors name the model file (missing, unreadable, not TorchScript) or the input/output
// that does not fit forward().
absl::StatusOr<std::unique_ptr<LoadedModel>> LoadTorchModel(const ModelLoadContext& context,
                                                            const TorchModelOptions& options);

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_TORCH_MODEL_H_
