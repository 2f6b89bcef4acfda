#include "repository/model_config_util.h"

namespace infera {

DataType FromConfigDataType(inference::DataType type) {
  switch (type) {
    case inference::TYPE_BOOL: return DataType::kBool;
    case inference::TYPE_UINT8: return DataType::kUint8;
    case inference::TYPE_UINT16: return DataType::kUint16;
    case inference::TYPE_UINT32: return DataType::kUint32;
    case inference::TYPE_UINT64: return DataType::kUint64;
    case inference::TYPE_INT8: return DataType::kInt8;
    case inference::TYPE_INT16: return DataType::kInt16;
    case inference::TYPE_INT32: return DataType::kInt32;
    case inference::TYPE_INT64: return DataType::kInt64;
    case inference::TYPE_FP16: return DataType::kFp16;
    case inference::TYPE_FP32: return DataType::kFp32;
    case inference::TYPE_FP64: return DataType::kFp64;
    case inference::TYPE_STRING: return DataType::kBytes;
    case inference::TYPE_BF16: return DataType::kBf16;
    default: return DataType::kInvalid;
  }
}

inference::DataType ToConfigDataType(DataType type) {
  switch (type) {
    case DataType::kBool: return inference::TYPE_BOOL;
    case DataType::kUint8: return inference::TYPE_UINT8;
    case DataType::kUint16: return inference::TYPE_UINT16;
    case DataType::kUint32: return inference::TYPE_UINT32;
    case DataType::kUint64: return inference::TYPE_UINT64;
    case DataType::kInt8: return inference::TYPE_INT8;
    case DataType::kInt16: return inference::TYPE_INT16;
    case DataType::kInt32: return inference::TYPE_INT32;
    case DataType::kInt64: return inference::TYPE_INT64;
    case DataType::kFp16: return inference::TYPE_FP16;
    case DataType::kFp32: return inference::TYPE_FP32;
    case DataType::kFp64: return inference::TYPE_FP64;
    case DataType::kBytes: return inference::TYPE_STRING;
    case DataType::kBf16: return inference::TYPE_BF16;
    case DataType::kInvalid: break;
  }
  return inference::TYPE_INVALID;
}

const inference::ModelInput* FindConfigInput(const inference::ModelConfig& config,
                                             std::string_view name) {
  for (const auto& input : config.input()) {
    if (input.name() == name) return &input;
  }
  return nullptr;
}

const inference::ModelOutput* FindConfigOutput(const inference::ModelConfig& config,
                                               std::string_view name) {
  for (const auto& output : config.output()) {
    if (output.name() == name) return &output;
  }
  return nullptr;
}

Shape ClientShape(const inference::ModelConfig& config,
                  const google::protobuf::RepeatedField<int64_t>& dims) {
  Shape shape;
  shape.reserve(dims.size() + 1);
  if (config.max_batch_size() > 0) shape.push_back(-1);
  shape.insert(shape.end(), dims.begin(), dims.end());
  return shape;
}

std::optional<std::string> ConfigParameter(const inference::ModelConfig& config,
                                           std::string_view key) {
  auto it = config.parameters().find(std::string(key));
  if (it == config.parameters().end()) return std::nullopt;
  return it->second.string_value();
}

std::string PlatformName(const inference::ModelConfig& config) {
  return config.platform().empty() ? config.backend() : config.platform();
}

}  // namespace infera
