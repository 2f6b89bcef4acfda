#include "api/tensor.h"

#include <cstring>

#include "common/str_cat.h"

namespace infera {

std::optional<int64_t> ElementCount(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim != 0 && count > INT64_MAX / dim) return std::nullopt;
    count *= dim;
  }
  return count;
}

std::string ShapeToString(const Shape& shape) {
  return StrCat("[", StrJoin(shape, ","), "]");
}

absl::StatusOr<std::vector<std::string_view>> SplitBytesElements(std::string_view data) {
  std::vector<std::string_view> elements;
  size_t offset = 0;
  while (offset < data.size()) {
    if (data.size() - offset < 4) {
      return absl::InvalidArgumentError(
          StrCat("BYTES data truncated: ", data.size() - offset,
                       " trailing bytes cannot hold a 4-byte length prefix"));
    }
    uint32_t length;
    std::memcpy(&length, data.data() + offset, 4);  // little-endian hosts only (x86, arm64)
    offset += 4;
    if (length > data.size() - offset) {
      return absl::InvalidArgumentError(StrCat(
          "BYTES element ", elements.size(), " declares ", length, " bytes but only ",
          data.size() - offset, " remain"));
    }
    elements.emplace_back(data.data() + offset, length);
    offset += length;
  }
  return elements;
}

void AppendBytesElement(std::string& out, std::string_view element) {
  const uint32_t length = static_cast<uint32_t>(element.size());
  char prefix[4];
  std::memcpy(prefix, &length, 4);
  out.append(prefix, 4);
  out.append(element);
}

absl::Status ValidateTensorData(const Tensor& tensor) {
  std::optional<int64_t> count = ElementCount(tensor.shape);
  if (!count) {
    return absl::InvalidArgumentError(StrCat("tensor '", tensor.name, "' has invalid shape ",
                                                   ShapeToString(tensor.shape)));
  }
  if (tensor.dtype == DataType::kBytes) {
    auto elements = SplitBytesElements(tensor.data.AsStringView());
    if (!elements.ok()) {
      return absl::InvalidArgumentError(
          StrCat("tensor '", tensor.name, "': ", elements.status().message()));
    }
    if (static_cast<int64_t>(elements->size()) != *count) {
      return absl::InvalidArgumentError(
          StrCat("tensor '", tensor.name, "' has ", elements->size(),
                       " BYTES elements but shape ", ShapeToString(tensor.shape), " needs ",
                       *count));
    }
    return absl::OkStatus();
  }
  const size_t element_size = DataTypeByteSize(tensor.dtype);
  if (element_size == 0) {
    return absl::InvalidArgumentError(
        StrCat("tensor '", tensor.name, "' has no valid datatype"));
  }
  if (static_cast<uint64_t>(*count) > UINT64_MAX / element_size) {
    return absl::InvalidArgumentError(StrCat("tensor '", tensor.name, "' shape ",
                                                   ShapeToString(tensor.shape), " is too large"));
  }
  const uint64_t expected = static_cast<uint64_t>(*count) * element_size;
  if (tensor.data.size() != expected) {
    return absl::InvalidArgumentError(StrCat(
        "tensor '", tensor.name, "' has ", tensor.data.size(), " bytes of data but ",
        DataTypeName(tensor.dtype), " shape ", ShapeToString(tensor.shape), " needs ", expected));
  }
  return absl::OkStatus();
}

}  // namespace infera
