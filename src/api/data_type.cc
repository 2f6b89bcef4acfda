#include "api/data_type.h"

#include <array>
#include <utility>

namespace infera {
namespace {
struct TypeInfo {
  DataType type;
  std::string_view name;
  size_t byte_size;
};
constexpr std::array<TypeInfo, 15> kTypes = {{
    {DataType::kInvalid, "INVALID", 0},
    {DataType::kBool, "BOOL", 1},
    {DataType::kUint8, "UINT8", 1},
    {DataType::kUint16, "UINT16", 2},
    {DataType::kUint32, "UINT32", 4},
    {DataType::kUint64, "UINT64", 8},
    {DataType::kInt8, "INT8", 1},
    {DataType::kInt16, "INT16", 2},
    {DataType::kInt32, "INT32", 4},
    {DataType::kInt64, "INT64", 8},
    {DataType::kFp16, "FP16", 2},
    {DataType::kFp32, "FP32", 4},
    {DataType::kFp64, "FP64", 8},
    {DataType::kBytes, "BYTES", 0},
    {DataType::kBf16, "BF16", 2},
}};

// An out-of-range enum value (e.g. cast from a wire integer) reads as kInvalid.
const TypeInfo& Info(DataType type) {
  const size_t index = static_cast<size_t>(type);
  return kTypes[index < kTypes.size() ? index : 0];
}
}  // namespace

std::string_view DataTypeName(DataType type) { return Info(type).name; }

std::optional<DataType> ParseDataTypeName(std::string_view name) {
  for (size_t i = 1; i < kTypes.size(); ++i) {
    if (kTypes[i].name == name) return kTypes[i].type;
  }
  return std::nullopt;
}

size_t DataTypeByteSize(DataType type) { return Info(type).byte_size; }

}  // namespace infera
