#include "grpc/tensor_contents.h"

#include <array>
#include <cstring>
#include <type_traits>
#include <utility>

#include "common/str_cat.h"

namespace infera {
namespace {

using google::protobuf::RepeatedField;
using inference::InferTensorContents;

// The fields of InferTensorContents with how many values each holds.
std::array<std::pair<std::string_view, int>, 8> FieldSizes(const InferTensorContents& c) {
  return {{{"bool_contents", c.bool_contents_size()},
           {"int_contents", c.int_contents_size()},
           {"int64_contents", c.int64_contents_size()},
           {"uint_contents", c.uint_contents_size()},
           {"uint64_contents", c.uint64_contents_size()},
           {"fp32_contents", c.fp32_contents_size()},
           {"fp64_contents", c.fp64_contents_size()},
           {"bytes_contents", c.bytes_contents_size()}}};
}

// Converts wire values to `Element`s, range-checking narrowing conversions.
template <typename Element, typename Wire>
absl::StatusOr<Buffer> Narrow(const RepeatedField<Wire>& values, DataType type,
                              std::string_view what) {
  const size_t n = static_cast<size_t>(values.size());
  uint8_t* out = nullptr;
  Buffer buffer = Buffer::Allocate(n * sizeof(Element), &out);
  if constexpr (std::is_same_v<Element, Wire>) {
    if (n > 0) std::memcpy(out, values.data(), n * sizeof(Element));
  } else {
    for (size_t i = 0; i < n; ++i) {
      const Wire value = values.Get(static_cast<int>(i));
      if constexpr (std::is_integral_v<Wire> && !std::is_same_v<Wire, bool>) {
        if (!std::in_range<Element>(value)) {
          return absl::InvalidArgumentError(StrCat(what, " value ", value, " at index ", i,
                                                   " is out of range for ", DataTypeName(type)));
        }
      }
      const Element element = static_cast<Element>(value);
      std::memcpy(out + i * sizeof(Element), &element, sizeof(Element));
    }
  }
  return buffer;
}

absl::StatusOr<Buffer> DecodeBytes(const InferTensorContents& contents) {
  size_t total = 0;
  for (const std::string& element : contents.bytes_contents()) total += 4 + element.size();
  std::string data;
  data.reserve(total);
  for (const std::string& element : contents.bytes_contents()) AppendBytesElement(data, element);
  return Buffer::FromString(std::move(data));
}

}  // namespace

std::string_view TypedContentsField(DataType type) {
  switch (type) {
    case DataType::kBool: return "bool_contents";
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32: return "int_contents";
    case DataType::kInt64: return "int64_contents";
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32: return "uint_contents";
    case DataType::kUint64: return "uint64_contents";
    case DataType::kFp32: return "fp32_contents";
    case DataType::kFp64: return "fp64_contents";
    case DataType::kBytes: return "bytes_contents";
    default: return "";
  }
}

absl::StatusOr<Buffer> DecodeTypedContents(const InferTensorContents& contents, DataType type,
                                           int64_t element_count, std::string_view what) {
  const std::string_view field = TypedContentsField(type);
  if (field.empty()) {
    return absl::InvalidArgumentError(StrCat(what, " is ", DataTypeName(type),
                                             ", which has no typed contents field: send it in "
                                             "raw_input_contents"));
  }
  int count = 0;
  for (const auto& [name, size] : FieldSizes(contents)) {
    if (name == field) {
      count = size;
    } else if (size > 0) {
      return absl::InvalidArgumentError(StrCat(what, " is ", DataTypeName(type), " but sets ", name,
                                               "; ", DataTypeName(type), " values go in ", field));
    }
  }
  if (count != element_count) {
    return absl::InvalidArgumentError(StrCat(what, " has ", count, " values in ", field,
                                             " but its shape needs ", element_count));
  }
  switch (type) {
    case DataType::kBool: return Narrow<uint8_t>(contents.bool_contents(), type, what);
    case DataType::kInt8: return Narrow<int8_t>(contents.int_contents(), type, what);
    case DataType::kInt16: return Narrow<int16_t>(contents.int_contents(), type, what);
    case DataType::kInt32: return Narrow<int32_t>(contents.int_contents(), type, what);
    case DataType::kInt64: return Narrow<int64_t>(contents.int64_contents(), type, what);
    case DataType::kUint8: return Narrow<uint8_t>(contents.uint_contents(), type, what);
    case DataType::kUint16: return Narrow<uint16_t>(contents.uint_contents(), type, what);
    case DataType::kUint32: return Narrow<uint32_t>(contents.uint_contents(), type, what);
    case DataType::kUint64: return Narrow<uint64_t>(contents.uint64_contents(), type, what);
    case DataType::kFp32: return Narrow<float>(contents.fp32_contents(), type, what);
    case DataType::kFp64: return Narrow<double>(contents.fp64_contents(), type, what);
    case DataType::kBytes: return DecodeBytes(contents);
    default: break;
  }
  return absl::InternalError(StrCat(what, ": unhandled datatype ", DataTypeName(type)));
}

}  // namespace infera
