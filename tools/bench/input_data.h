// Input data for the requests of a run: random, zeros, or read from a JSON file in
// perf_analyzer's --input-data format; each PayloadData becomes one pre-encoded request
// that the load driver sends round-robin.
//
//   random  `num_random_payloads` different payloads (seeded: reproducible). Floats
//           uniform in [0, 1); integers uniform in [int_low, int_high) clamped to the
//           type (default [0, 100): valid ids for embedding models); BOOL 0/1; BYTES
//           random lowercase strings of `string_length`.
//   zero    one payload of zeros (BYTES: the string "0").
//           With either, BYTES inputs named in `image_inputs` cycle through `images`
//           (encoded JPEG/PNG files, image_inputs.h), and other BYTES inputs are
//           `string_data` when set (perf_analyzer's --string-data).
//   FILE    {"data": [{"INPUT0": [1, 2, ...], "INPUT1": {"content": [...], "shape": [16]}},
//                     ...],
//            "validation_data": [{"OUTPUT0": [...]}, ...]}       (optional)
//           A tensor may also be {"b64": "..."} (perf_analyzer's form): for BYTES the
//           decoded bytes are one element (e.g. a JPEG), for other datatypes the raw
//           little-endian elements.
//           Each entry of "data" is one batch row (the dimensions without the batch
//           dimension; "shape" overrides them for variable inputs). With -b B, payload
//           k takes entries k*B .. k*B+B-1 (wrapping) as its rows; there are
//           max(1, N / B) payloads. "validation_data" (same length) gives the expected
//           outputs for --check, batched the same way.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_INPUT_DATA_H_
#define INFERA_TOOLS_BENCH_INPUT_DATA_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "tools/bench/model_metadata.h"

namespace infera::bench {

enum class InputDataMode { kRandom, kZero, kFile };

struct InputDataOptions {
  InputDataMode mode = InputDataMode::kRandom;
  std::string file;  // kFile
  uint64_t seed = 1;
  int num_random_payloads = 8;
  int64_t int_low = 0;
  int64_t int_high = 100;
  int64_t string_length = 16;
  std::string string_data;             // non-empty: every BYTES element (random and zero)
  std::set<std::string> image_inputs;  // BYTES inputs that take encoded images ...
  std::vector<std::string> images;     // ... and the image files they cycle through
};

// Where a tensor lives in a registered shared-memory region (--shared-memory system).
struct ShmTensorRef {
  std::string region;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

// With --shared-memory system: each input's bytes in a region (one per input, in input
// order) and a region slot per requested output (bench_shared_memory.h).
struct PayloadShm {
  std::vector<ShmTensorRef> inputs;
  std::vector<std::pair<std::string, ShmTensorRef>> outputs;  // output name, slot
};

struct PayloadData {
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected_outputs;  // empty unless the file has validation_data
  std::optional<PayloadShm> shm;         // set with --shared-memory system
};

// `inputs`: the resolved shapes (ResolveInputShapes), batch dimension included when
// `batches`; `outputs`: the model's outputs (for validation data datatypes).
absl::StatusOr<std::vector<PayloadData>> MakePayloadData(const std::vector<TensorSpec>& inputs,
                                                         const std::vector<TensorSpec>& outputs,
                                                         bool batches, int64_t batch_size,
                                                         const InputDataOptions& options);

// The file format above, from text (exposed for tests).
absl::StatusOr<std::vector<PayloadData>> ParseInputDataJson(std::string_view json,
                                                            const std::vector<TensorSpec>& inputs,
                                                            const std::vector<TensorSpec>& outputs,
                                                            bool batches, int64_t batch_size);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_INPUT_DATA_H_
