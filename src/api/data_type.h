// Tensor element types, named as the KServe v2 protocol names them.
//
// The wire names ("FP32", "BYTES", ...) are KServe's; the model configuration uses
// Triton's TYPE_* names (see repository/model_config_util.h for the mapping).
#ifndef INFERA_API_DATA_TYPE_H_
#define INFERA_API_DATA_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace infera {

enum class DataType : uint8_t {
  kInvalid = 0,
  kBool,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFp16,
  kFp32,
  kFp64,
  kBytes,  // variable-length byte strings (Triton's TYPE_STRING)
  kBf16,
};

// KServe name of `type`, e.g. "FP32". "INVALID" for kInvalid.
std::string_view DataTypeName(DataType type);

// Parses a KServe name ("INT64"); nullopt when the name is not a KServe datatype.
std::optional<DataType> ParseDataTypeName(std::string_view name);

// Bytes per element; 0 for kBytes (variable length) and kInvalid.
size_t DataTypeByteSize(DataType type);

}  // namespace infera

#endif  // INFERA_API_DATA_TYPE_H_
