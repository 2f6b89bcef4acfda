// Typed tensor contents: KServe's InferTensorContents (one repeated field per element
// type) of a request's input, decoded into a Tensor's bytes (api/tensor.h layout).
// Answers never use them: infera, as Triton, answers in raw_output_contents.
//
//   BOOL             bool_contents      INT64   int64_contents    FP32   fp32_contents
//   INT8/16/32       int_contents       UINT64  uint64_contents   FP64   fp64_contents
//   UINT8/16/32      uint_contents      BYTES   bytes_contents    FP16, BF16: none (raw only)
//
// Decoding checks, with messages naming the tensor: the datatype has a typed field; only
// that field is set; its element count matches the shape's; every value fits the
// datatype (an INT8 in int_contents must be in [-128, 127]); BYTES entries become
// length-prefixed elements.
//
// Assumes a little-endian host (x86-64, arm64), like the rest of infera.
//
// Thread-safe (pure functions).
#ifndef INFERA_GRPC_TENSOR_CONTENTS_H_
#define INFERA_GRPC_TENSOR_CONTENTS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/buffer.h"
#include "api/data_type.h"
#include "api/tensor.h"
#include "grpc_service.pb.h"

namespace infera {

// Name of the InferTensorContents field that carries `type` ("int_contents"); "" when
// there is none.
std::string_view TypedContentsField(DataType type);

// The bytes of a tensor of `type` with `element_count` elements given as typed
// `contents`. `what` names the tensor in errors ("input 'INPUT0'").
absl::StatusOr<Buffer> DecodeTypedContents(const inference::InferTensorContents& contents,
                                           DataType type, int64_t element_count,
                                           std::string_view what);

}  // namespace infera

#endif  // INFERA_GRPC_TENSOR_CONTENTS_H_
