// LibTorch first: torch_tensor.h only forward-declares at::Tensor.
#include <ATen/ATen.h>

#include "backend/torch/torch_tensor.h"

#include <cstring>
#include <memory>
#include <optional>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

std::optional<at::ScalarType> ToScalarType(DataType type) {
  switch (type) {
    case DataType::kBool: return at::kBool;
    case DataType::kUint8: return at::kByte;
    case DataType::kInt8: return at::kChar;
    case DataType::kInt16: return at::kShort;
    case DataType::kInt32: return at::kInt;
    case DataType::kInt64: return at::kLong;
    case DataType::kFp16: return at::kHalf;
    case DataType::kBf16: return at::kBFloat16;
    case DataType::kFp32: return at::kFloat;
    case DataType::kFp64: return at::kDouble;
    default: return std::nullopt;  // UINT16/32/64 and BYTES have no LibTorch 1.13 dtype
  }
}

// The KServe name of a torch dtype, or the torch name when infera has none.
std::string DescribeScalarType(at::ScalarType type) {
  switch (type) {
    case at::kBool: return "BOOL";
    case at::kByte: return "UINT8";
    case at::kChar: return "INT8";
    case at::kShort: return "INT16";
    case at::kInt: return "INT32";
    case at::kLong: return "INT64";
    case at::kHalf: return "FP16";
    case at::kBFloat16: return "BF16";
    case at::kFloat: return "FP32";
    case at::kDouble: return "FP64";
    default: return StrCat("torch ", c10::toString(type));
  }
}

absl::Status CheckBoolBytes(const Tensor& tensor) {
  const uint8_t* bytes = tensor.data.data();
  for (size_t i = 0; i < tensor.data.size(); ++i) {
    if (bytes[i] > 1) {
      return absl::InvalidArgumentError(StrCat("input '", tensor.name, "': BOOL element ", i,
                                               " is ", static_cast<int>(bytes[i]),
                                               ", expected 0 or 1"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<at::Tensor> ToTorchTensor(const Tensor& tensor) {
  const std::optional<at::ScalarType> type = ToScalarType(tensor.dtype);
  if (!type) {
    return absl::InvalidArgumentError(StrCat("input '", tensor.name, "': datatype ",
                                             DataTypeName(tensor.dtype),
                                             " has no LibTorch equivalent"));
  }
  // The core validates sizes already; from_blob must never read past the bytes, so
  // check again (no data scan for fixed-size types).
  RETURN_IF_ERROR(ValidateTensorData(tensor));
  if (tensor.dtype == DataType::kBool) RETURN_IF_ERROR(CheckBoolBytes(tensor));
  const at::TensorOptions options = at::TensorOptions().dtype(*type).device(at::kCPU);
  const size_t element_size = DataTypeByteSize(tensor.dtype);
  const auto address = reinterpret_cast<uintptr_t>(tensor.data.data());
  if (tensor.data.empty() || address % element_size != 0) {
    // Misaligned element access is undefined behaviour (and slow); copy instead.
    at::Tensor copy = at::empty(tensor.shape, options);
    if (!tensor.data.empty()) std::memcpy(copy.data_ptr(), tensor.data.data(), tensor.data.size());
    return copy;
  }
  // The deleter keeps a reference to the bytes for as long as the tensor (or anything
  // aliasing it, such as an output that is the input) lives.
  return at::from_blob(const_cast<uint8_t*>(tensor.data.data()), tensor.shape,
                       [keep_alive = tensor.data](void*) {}, options);
}

absl::StatusOr<Tensor> FromTorchTensor(const std::string& name, DataType expected,
                                       std::string_view config_type_name, at::Tensor value) {
  if (!value.defined()) {
    return absl::InternalError(StrCat("output '", name, "': the model returned an "
                                      "undefined tensor (None)"));
  }
  if (value.layout() != at::kStrided) value = value.to_dense();  // mkldnn / sparse
  if (!value.device().is_cpu()) value = value.to(at::kCPU);
  const std::optional<at::ScalarType> type = ToScalarType(expected);
  if (!type || value.scalar_type() != *type) {
    return absl::InternalError(StrCat("output '", name, "': the model returned ",
                                      DescribeScalarType(value.scalar_type()),
                                      " but the config declares ", config_type_name));
  }
  Tensor out;
  out.name = name;
  out.dtype = expected;
  out.shape.assign(value.sizes().begin(), value.sizes().end());
  auto owner = std::make_shared<at::Tensor>(value.contiguous());
  const auto* data = static_cast<const uint8_t*>(owner->data_ptr());
  const size_t size = owner->nbytes();
  out.data = Buffer::View(std::move(owner), data, size);
  return out;
}

}  // namespace infera
