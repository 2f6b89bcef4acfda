// Decoding of a raw binary KServe v2 HTTP infer request (Triton's binary tensor
// extension, "raw binary request").
//
// A request whose Inference-Header-Content-Length is 0 has no JSON header: the whole
// body is the raw bytes of the model's single input. As Triton does:
//   - the model must have exactly one input (its name and datatype come from the config);
//   - the request has batch size 1: the shape is the config's dims, with a leading 1
//     when the model batches (max_batch_size > 0);
//   - at most one dimension may be variable (-1); it is inferred from the byte count,
//     which must be a whole number of elements (of the other dimensions' product);
//   - a BYTES input needs dims [1]: the body is that one element's bytes, without the
//     4-byte length prefix (the decoder adds it);
//   - every output is answered as binary data (request parameter binary_data_output).
//
// Contract: every problem is InvalidArgument naming it (the rule, the model, the byte
// count); `max_elements` bounds the input's element count, as for JSON requests. The
// input of a fixed-size datatype is a zero-copy view into the body (the InferRequest
// keeps it alive); a BYTES element is copied once behind its length prefix.
// model_name / model_version are left unset: the route takes them from the URL.
//
// Thread-safe (no shared state).
//
// Usage:
//   ASSIGN_OR_RETURN(InferRequest request,
//                    DecodeRawInferRequest(std::move(body), model->config(), kMaxElements));
#ifndef INFERA_CODEC_REQUEST_DECODER_RAW_H_
#define INFERA_CODEC_REQUEST_DECODER_RAW_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "model_config.pb.h"

namespace infera {

absl::StatusOr<InferRequest> DecodeRawInferRequest(std::string body,
                                                   const inference::ModelConfig& config,
                                                   size_t max_elements);

}  // namespace infera

#endif  // INFERA_CODEC_REQUEST_DECODER_RAW_H_
