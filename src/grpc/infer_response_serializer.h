// SerializeInferResponse: an InferResponse as the bytes of a ModelInferResponse (unary
// ModelInfer) or of a ModelStreamInferResponse carrying it in `infer_response` (a
// ModelStreamInfer answer), in a grpc::ByteBuffer, without copying large output tensors.
//
// Layout: the header fields (model_name, model_version, id, parameters, outputs;
// infer_message_codec.h EncodeModelInferResponseHeader) serialised by protobuf, then one
// raw_output_contents entry (field 6) per output in output order. An entry of at least
// `kReferenceBytes` is its tag and length followed by a grpc::Slice that *references*
// the output's Buffer (the slice holds a copy of the Buffer, so the bytes stay alive
// until gRPC has written them); smaller entries are copied next to the header (one
// allocation; a referencing slice costs more than copying a few hundred bytes). Protobuf
// accepts fields in any order and concatenated repeated entries, so any parser reads
// the same message EncodeModelInferResponse builds. A shared-memory output has an empty
// entry (as EncodeModelInferResponse).
//
// Errors: Internal when an output's bytes do not match its datatype and shape;
// ResourceExhausted naming --grpc-max-message-bytes when the ModelInferResponse would be
// larger than `max_bytes` (checked before anything is written).
//
// Thread-safe (a pure function).
#ifndef INFERA_GRPC_INFER_RESPONSE_SERIALIZER_H_
#define INFERA_GRPC_INFER_RESPONSE_SERIALIZER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "grpcpp/support/byte_buffer.h"

namespace infera {

enum class ResponseFraming {
  kUnary,   // a ModelInferResponse
  kStream,  // a ModelStreamInferResponse whose infer_response is the answer
};

// Outputs of at least this many bytes are referenced rather than copied.
inline constexpr size_t kReferenceBytes = 4096;

absl::StatusOr<grpc::ByteBuffer> SerializeInferResponse(const InferResponse& response,
                                                        ResponseFraming framing, uint64_t max_bytes);

}  // namespace infera

#endif  // INFERA_GRPC_INFER_RESPONSE_SERIALIZER_H_
