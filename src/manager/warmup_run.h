// RunWarmupSamples: runs a model's warm-up samples (model_warmup, built by warmup.h) on
// one of its instances at load, on the loading thread — batched models through Execute()
// with ExecutionContext::Warmup(), decoupled ones through ExecuteDecoupled() waiting for
// each sample's final response — and checks what comes back against the config.
//
// Thread-safe (instances of one version are warmed in parallel, each by one thread).
#ifndef INFERA_MANAGER_WARMUP_RUN_H_
#define INFERA_MANAGER_WARMUP_RUN_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "api/infer_request.h"
#include "backend/backend.h"
#include "model_config.pb.h"

namespace infera {

// Runs `samples` (each with `rows[i]` rows) on `instance` in order. On failure,
// `*failed_sample` is the index of the sample that failed; the error is Internal naming it.
absl::Status RunWarmupSamples(const inference::ModelConfig& config, bool decoupled,
                              const std::vector<InferRequest>& samples, const std::vector<int64_t>& rows,
                              ModelInstance& instance, size_t* failed_sample);

}  // namespace infera

#endif  // INFERA_MANAGER_WARMUP_RUN_H_
