// Triton's classification extension, once for both transports.
//
// A requested output with parameter "classification": k (an integer >= 1) is answered
// not as the model's tensor but as its top k classes: a BYTES tensor of "value:index"
// strings, "value:index:label" when the output's config names a label_filename whose
// line `index` is non-empty, best first. As Triton:
//   - a batching model's output [batch, d1, d2...] gives [batch, min(k, d1*d2...)], each
//     row classified on its own; a non-batching model's output gives [min(k, count)];
//   - k larger than the class count returns every class;
//   - the value is formatted as C++'s std::to_string formats the element's type: "%f"
//     for floats ("0.750000"), plain decimal for integers ("12").
// infera's choices where Triton leaves it open: equal values keep index order (lower
// index first), NaN ranks below every number, and FP16/BF16 outputs are classified too
// (their values formatted as floats; Triton refuses them).
//
// The per-output parameters infera knows are binary_data, classification and the
// shared-memory ones (shared_memory_region, shared_memory_byte_size,
// shared_memory_offset); any other name is an error, not silently ignored.
//
// Thread-safe (pure functions; labels are read at model load and immutable after).
#ifndef INFERA_MANAGER_CLASSIFICATION_H_
#define INFERA_MANAGER_CLASSIFICATION_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "api/tensor.h"
#include "model_config.pb.h"

namespace infera {

// Labels of each output that has a label_filename, by output name.
using OutputLabels = std::map<std::string, std::vector<std::string>, std::less<>>;

// Reads every output's label_filename (a file inside `model_dir`, one label per line;
// a trailing '\r' is dropped). Error (FailedPrecondition) naming the output and file when
// the name leaves the model directory or the file cannot be read.
absl::StatusOr<OutputLabels> LoadOutputLabels(const inference::ModelConfig& config,
                                              const std::filesystem::path& model_dir);

// Checks the parameters of a requested output `spec` of model `config`: only known names;
// classification an integer >= 1 on an output of a numeric datatype. Returns k, or 0 when
// classification is not asked. InvalidArgument naming the output and parameter.
absl::StatusOr<int64_t> CheckRequestedOutputParameters(const inference::ModelConfig& config,
                                                       const RequestedOutput& output);

// The top-`k` classes of `output` (k >= 1), per row when `batched`. `labels` may be
// empty. InvalidArgument for a BYTES/BOOL output; Internal when its bytes do not match
// its shape.
absl::StatusOr<Tensor> Classify(const Tensor& output, int64_t k, bool batched,
                                const std::vector<std::string>& labels);

// Replaces each output of `outputs` (in `requested` order, as the model answers a
// request that names its outputs) whose request asks for classification by its classes.
absl::Status ApplyClassification(const inference::ModelConfig& config, const OutputLabels& labels,
                                 const std::vector<RequestedOutput>& requested,
                                 std::vector<Tensor>& outputs);

}  // namespace infera

#endif  // INFERA_MANAGER_CLASSIFICATION_H_
