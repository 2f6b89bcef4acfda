// ModelMetadata: what the load generator learns about the model under test from the
// server (KServe v2 GET /v2/models/{m}, and Triton's GET /v2/models/{m}/config when the
// server has it), and the concrete input shapes it derives from that and the flags.
//
// Shapes: metadata shapes use -1 for a variable dimension; a batching model's shapes
// start with the batch dimension -1 (Triton and infera both report it that way). When
// the config endpoint gives max_batch_size, that decides whether the model batches;
// otherwise a leading -1 on every input is taken as the batch dimension, unless a
// --shape override has the input's full rank (then the model is taken as not batching).
// --shape NAME:D1,D2 gives the dimensions *without* the batch dimension, as in
// perf_analyzer; every dimension left at -1 after overrides is an error naming the input.
//
// Thread-safe (pure functions).
//
// Usage:
//   ASSIGN_OR_RETURN(ModelMetadata metadata, ParseModelMetadata(body));
//   ASSIGN_OR_RETURN(std::vector<TensorSpec> inputs,
//                    ResolveInputShapes(metadata, overrides, batch_size));
#ifndef INFERA_TOOLS_BENCH_MODEL_METADATA_H_
#define INFERA_TOOLS_BENCH_MODEL_METADATA_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/data_type.h"
#include "api/tensor.h"

namespace infera::bench {

struct TensorSpec {
  std::string name;
  DataType dtype = DataType::kInvalid;
  Shape shape;
};

struct ModelMetadata {
  std::string name;
  std::string platform;
  std::vector<std::string> versions;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  // From the config endpoint; nullopt when the server has none.
  std::optional<int64_t> max_batch_size;
};

// Parses the KServe v2 model metadata JSON. Errors name the missing or bad field.
absl::StatusOr<ModelMetadata> ParseModelMetadata(std::string_view json);

// max_batch_size from a Triton model-config JSON ({"max_batch_size": 8, ...}); nullopt
// when absent or unparsable.
std::optional<int64_t> ParseMaxBatchSize(std::string_view config_json);

// Parses "NAME:D1,D2,..." (perf_analyzer's --shape) into the map.
absl::Status ParseShapeOverride(std::string_view text, std::map<std::string, Shape>* overrides);

// Whether the model takes a batch dimension (see the header comment).
bool ModelBatches(const ModelMetadata& metadata, const std::map<std::string, Shape>& overrides);

// The concrete shape of every input for requests of `batch_size` rows (the batch
// dimension included when the model batches). Errors: unknown input in an override,
// override rank or fixed dimension mismatch, a variable dimension left, batch_size > 1
// for a model that does not batch or above max_batch_size.
// With `allow_variable` (input data from a file, which may give shapes), dimensions left
// at -1 are kept instead of being an error.
absl::StatusOr<std::vector<TensorSpec>> ResolveInputShapes(
    const ModelMetadata& metadata, const std::map<std::string, Shape>& overrides,
    int64_t batch_size, bool allow_variable = false);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_MODEL_METADATA_H_
