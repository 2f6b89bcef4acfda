// Checks an InferRequest against its model's config and prepares it for the backend.
//
// Every rule a client can break is checked here, once, before the request is queued,
// so that a bad request costs no queue slot or compute and gets a 400 naming the
// problem: unknown/missing/duplicate inputs, datatype, rank, each dimension (with -1
// wildcards), the batch dimension against max_batch_size, consistent batch sizes
// across inputs, data size, and requested outputs (and their parameters: see
// classification.h).
//
// Thread-safe (pure functions).
#ifndef INFERA_MANAGER_REQUEST_VALIDATOR_H_
#define INFERA_MANAGER_REQUEST_VALIDATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "model_config.pb.h"

namespace infera {

// Validates `request` and rewrites it for the backend: inputs reordered into config
// order and reshaped per `reshape`. Returns the request's batch size (its leading
// dimension; 1 when the model does not batch). InvalidArgument on any violation.
absl::StatusOr<int64_t> PrepareRequest(const inference::ModelConfig& config,
                                       InferRequest& request);

// Shape `shape` rewritten to `target` dims, where at most one -1 in `target` takes
// whatever element count is left. InvalidArgument when the counts cannot match.
absl::StatusOr<Shape> ReshapeTo(const Shape& shape,
                                const google::protobuf::RepeatedField<int64_t>& target);

}  // namespace infera

#endif  // INFERA_MANAGER_REQUEST_VALIDATOR_H_
