// Tensor: a named, typed, shaped block of bytes — the unit every frontend, the
// scheduler and every backend exchange.
//
// Layout of `data`:
//   - fixed-size types: row-major, little-endian elements, byte size =
//     ElementCount(shape) * DataTypeByteSize(dtype);
//   - BYTES: one entry per element, each a 4-byte little-endian length followed by
//     that many bytes (the KServe binary-tensor / Triton serialisation), so binary
//     bodies need no conversion.
// BOOL is one byte per element, 0 or 1.
#ifndef INFERA_API_TENSOR_H_
#define INFERA_API_TENSOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/buffer.h"
#include "api/data_type.h"

namespace infera {

using Shape = std::vector<int64_t>;

struct Tensor {
  std::string name;
  DataType dtype = DataType::kInvalid;
  Shape shape;
  Buffer data;
};

// Number of elements of `shape` (1 for a scalar shape []). nullopt when a dimension
// is negative or the product overflows int64.
std::optional<int64_t> ElementCount(const Shape& shape);

// "[2,3,224]" — for error messages.
std::string ShapeToString(const Shape& shape);

// Checks that `tensor.data` holds exactly the bytes its dtype and shape require
// (for BYTES: that the length-prefixed elements parse and their count matches).
absl::Status ValidateTensorData(const Tensor& tensor);

// Splits serialized BYTES data into its elements (views into `data`). Fails when an
// element's length prefix runs past the end.
absl::StatusOr<std::vector<std::string_view>> SplitBytesElements(std::string_view data);

// Appends one BYTES element (length prefix + bytes) to `out`.
// REQUIRES: element.size() <= UINT32_MAX (the wire format's length prefix is 32-bit;
// every producer is bounded far below, e.g. by --http-max-input-size).
void AppendBytesElement(std::string& out, std::string_view element);

}  // namespace infera

#endif  // INFERA_API_TENSOR_H_
