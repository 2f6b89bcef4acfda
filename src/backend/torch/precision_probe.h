// The load-time precision probe: a fixed, seeded input set built from a model's config,
// and the runs that compare (and time) an fp32 instance against a reduced-precision
// instance of the same model through ModelInstance::Execute — so the comparison sees
// exactly what clients see (boundary casts included). docs/optimisation.md describes how
// the inputs are built.
//
// Torch-free: works on any pair of ModelInstances.
//
// Not thread-safe; runs on the loading thread with instances it owns.
#ifndef INFERA_BACKEND_TORCH_PRECISION_PROBE_H_
#define INFERA_BACKEND_TORCH_PRECISION_PROBE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "backend/backend.h"
#include "backend/torch/precision_figures.h"
#include "model_config.pb.h"

namespace infera {

inline constexpr int kValidationSamples = 32;

// `num_samples` samples in config order, batched by min(max_batch_size, 8) (one sample
// per batch for a model that does not batch). The same config and `id_bound` always
// give the same bytes. Integer inputs are in [0, id_bound) (clipped to the type's range).
std::vector<std::vector<Tensor>> ValidationBatches(const inference::ModelConfig& config,
                                                   int64_t id_bound,
                                                   int num_samples = kValidationSamples);

// Runs every batch through both instances and compares the floating outputs. Errors:
// a failed Execute, prefixed with which instance ran it.
absl::StatusOr<PrecisionFigures> ComparePrecision(const std::vector<std::vector<Tensor>>& batches,
                                                  ModelInstance& fp32, ModelInstance& reduced);

// median(fp32 time) / median(reduced time) over up to `runs` timed runs each (after one
// untimed run each), stopping early once a side has used `budget_ms`. Errors: a failed
// Execute.
absl::StatusOr<double> MeasureSpeedup(const std::vector<Tensor>& sample, ModelInstance& fp32,
                                      ModelInstance& reduced, int runs = 5, int budget_ms = 1000);

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_PRECISION_PROBE_H_
