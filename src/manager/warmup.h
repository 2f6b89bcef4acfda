// Builds the warmup requests a config's `model_warmup` entries describe.
//
// Each sample's inputs are zeros, random values or the bytes of a file under
// <model_dir>/warmup/ (Triton's layout), shaped [batch_size] + dims when the model
// batches. A file must resolve inside warmup/ (no absolute path, no '..', no symbolic
// link that leads out) and be a regular file; errors name the file as the config does
// and do not reveal whether anything outside warmup/ exists. Inputs are bounded by
// kMaxWarmupInputBytes, all samples together by kMaxWarmupTotalBytes, and the runs
// (counts summed) by kMaxWarmupCount (repository/config_limits.h). Random data: floats uniform in [0, 1), integers in [0, 16) (small enough to
// be valid indices for embedding-style inputs), BOOL 0/1; BYTES falls back to zero data
// (empty strings), as in Triton. A sample with `count: N` appears N times (at least once).
//
// Thread-safe (pure function).
#ifndef INFERA_MANAGER_WARMUP_H_
#define INFERA_MANAGER_WARMUP_H_

#include <filesystem>
#include <vector>

#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "model_config.pb.h"

namespace infera {

absl::StatusOr<std::vector<InferRequest>> BuildWarmupRequests(
    const inference::ModelConfig& config, const std::filesystem::path& model_dir);

}  // namespace infera

#endif  // INFERA_MANAGER_WARMUP_H_
