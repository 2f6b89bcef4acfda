// Small helpers over inference::ModelConfig shared by the manager, backends and
// frontends: datatype mapping between Triton's TYPE_* and KServe names, lookups.
//
// Thread-safe (pure functions).
#ifndef INFERA_REPOSITORY_MODEL_CONFIG_UTIL_H_
#define INFERA_REPOSITORY_MODEL_CONFIG_UTIL_H_

#include <optional>
#include <string>
#include <string_view>

#include "api/data_type.h"
#include "api/tensor.h"
#include "model_config.pb.h"

namespace infera {

// TYPE_FP32 -> kFp32, TYPE_STRING -> kBytes, TYPE_INVALID -> kInvalid.
DataType FromConfigDataType(inference::DataType type);
inference::DataType ToConfigDataType(DataType type);

const inference::ModelInput* FindConfigInput(const inference::ModelConfig& config,
                                             std::string_view name);
const inference::ModelOutput* FindConfigOutput(const inference::ModelConfig& config,
                                               std::string_view name);

// Shape as clients see it: `dims`, with a leading -1 batch dimension when the model
// batches (max_batch_size > 0). This is what model metadata reports.
Shape ClientShape(const inference::ModelConfig& config,
                  const google::protobuf::RepeatedField<int64_t>& dims);

// Value of config parameter `key` (parameters { key: .. value { string_value: .. } }).
std::optional<std::string> ConfigParameter(const inference::ModelConfig& config,
                                           std::string_view key);

// "pytorch_libtorch" / "add_sub": the platform when set, else the backend (metadata).
std::string PlatformName(const inference::ModelConfig& config);

}  // namespace infera

#endif  // INFERA_REPOSITORY_MODEL_CONFIG_UTIL_H_
