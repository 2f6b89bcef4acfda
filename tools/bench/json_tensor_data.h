// Conversion between JSON tensor data (KServe v2 "data" arrays, perf_analyzer input
// files) and infera's binary tensor layout (api/tensor.h), on a rapidjson DOM.
//
// Used off the hot path only: parsing --input-data files, and decoding responses when
// --check is on. Nested arrays are flattened (row-major). Integers must be JSON
// integers within the datatype's range; FP32/FP16/BF16 are rounded from the parsed
// double; BOOL takes true/false; BYTES takes strings.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_JSON_TENSOR_DATA_H_
#define INFERA_TOOLS_BENCH_JSON_TENSOR_DATA_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "api/data_type.h"
#include "rapidjson/document.h"

namespace infera::bench {

// Appends the elements of `data` (a scalar or a nested array) as `dtype` to `*out`
// and adds their number to `*count`. Errors name the element index.
absl::Status AppendJsonTensorData(const rapidjson::Value& data, DataType dtype, std::string* out,
                                  int64_t* count);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_JSON_TENSOR_DATA_H_
