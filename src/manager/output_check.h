// Checks of what a backend returns against the model's config, and the selection of the
// outputs a client asked for — shared by the batched path (ModelVersion::RunBatch) and
// a decoupled model's responses (DecoupledResponseSink).
//
// A mismatch is the model's fault, never the client's: the errors are Internal, naming
// the model, the output, and what the config declares.
//
// Thread-safe (pure functions).
#ifndef INFERA_MANAGER_OUTPUT_CHECK_H_
#define INFERA_MANAGER_OUTPUT_CHECK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "api/infer_request.h"
#include "api/tensor.h"
#include "model_config.pb.h"

namespace infera {

// Every config output, in config order (count, names, datatypes, shapes), and undoes any
// output `reshape`. `rows` is the batch's total rows (0: no batching).
absl::Status CheckOutputs(const inference::ModelConfig& config, int64_t rows, std::vector<Tensor>& outputs);

// A decoupled model's response: any non-empty subset of the config outputs, each at most
// once, in any order; each checked (datatype, shape, reshape undone) as CheckOutputs does.
// `rows` as above.
absl::Status CheckOutputSubset(const inference::ModelConfig& config, int64_t rows, std::vector<Tensor>& outputs);

// The outputs the client asked for, in the order asked (all, unchanged, if none). An
// output asked for but absent (a decoupled response that carries fewer) is skipped.
std::vector<Tensor> SelectOutputs(std::vector<Tensor> outputs, const std::vector<RequestedOutput>& requested);

}  // namespace infera

#endif  // INFERA_MANAGER_OUTPUT_CHECK_H_
