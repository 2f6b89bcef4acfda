// Conversions between infera::Tensor and at::Tensor without copying the bytes.
//
//   infera -> torch: at::from_blob over the Buffer's bytes. The at::Tensor's deleter
//       holds a copy of the Buffer, so the bytes stay alive as long as any tensor (or
//       output) that aliases them. Bytes not aligned to their element size (a binary
//       tensor at an odd offset inside an HTTP body) are copied into a fresh tensor.
//   torch -> infera: the tensor is made contiguous (a copy only when it is not) and
//       moved into the Buffer's owner; the Buffer views its storage.
//
// IMPORTANT: an input tensor views request memory. A model that writes into its input
// in place (x.add_(1)) writes into that memory; the request owns it and does not read
// it afterwards, so this is harmless, but the tensor must not be treated as scratch
// space shared with anyone else.
//
// Only the backend's .cc files include this header, after LibTorch's headers; it
// forward-declares at::Tensor so that it stays free of LibTorch includes itself.
//
// Thread-safe: pure functions.
#ifndef INFERA_BACKEND_TORCH_TORCH_TENSOR_H_
#define INFERA_BACKEND_TORCH_TORCH_TENSOR_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/tensor.h"

namespace at {
class Tensor;
}  // namespace at

namespace infera {

// A CPU tensor viewing (or, when misaligned, copying) `tensor`'s bytes. Fails for a
// datatype LibTorch lacks (UINT16/32/64, BYTES) and for BOOL bytes other than 0/1.
absl::StatusOr<at::Tensor> ToTorchTensor(const Tensor& tensor);

// Wraps `value` as output `name`. Fails with Internal (the model's fault, not the
// client's), naming the output, when `value` is undefined or not of `expected` dtype.
// `config_type_name` ("TYPE_FP32") is for the message only.
absl::StatusOr<Tensor> FromTorchTensor(const std::string& name, DataType expected,
                                       std::string_view config_type_name, at::Tensor value);

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_TORCH_TENSOR_H_
