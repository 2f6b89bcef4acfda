// Decoding of KServe v2 HTTP/REST infer requests, with Triton's binary tensor extension.
//
// The body of POST /v2/models/{name}[/versions/{version}]/infer is JSON:
//
//   {"id": "42",                                   optional string
//    "parameters": {"key": true | 1 | 0.5 | "s"},  optional; nested values rejected
//    "inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32",
//                "parameters": {...},               optional
//                "data": [[1, 2], [3, 4]]}],        flat or nested, row-major
//    "outputs": [{"name": "y", "parameters": {"binary_data": true}}]}   optional
//
// With the binary extension the request carries an Inference-Header-Content-Length
// header: the first N bytes are the JSON above, and each input whose parameters hold
// "binary_data_size": B has no "data" and takes the next B bytes of the rest of the body,
// in input order (raw little-endian elements; BYTES as 4-byte length + bytes each).
//
// Contract:
//   - Every problem with the body is InvalidArgument with a message naming it (the JSON
//     error and byte offset, the field, the tensor, the element index, expected vs got).
//     Nothing is thrown; hostile input never reads out of bounds.
//   - Data elements are converted per datatype as json_element.h describes (range-checked
//     integers, exact float parsing, NaN / Infinity / -Infinity accepted for floats).
//   - Nested data arrays are flattened; only the flattened count is checked against the
//     shape, not the nesting.
//   - Unknown keys are ignored at every level (KServe allows extension fields); duplicate
//     known keys, duplicate input names and duplicate output names are errors.
//   - Input parameters are checked (bool/number/string only) but not kept: Tensor has no
//     parameters. Except: an input with a "shared_memory_region" parameter has no "data"
//     (Triton's system shared-memory extension); the parameters of every input are then
//     kept in InferRequest::input_parameters for shm/shared_memory_binding.h. Request
//     and output parameters are kept; "binary_data_output" and "binary_data" must be
//     bools (see output_encoding.h).
//   - `max_elements` bounds every input's element count (its shape and its data), so a
//     small body cannot make the server allocate for a huge shape.
//   - model_name / model_version are left unset: the route takes them from the URL.
//
// Performance: the body is parsed in situ with rapidjson's SAX reader (one reader per
// thread, its stack reused); JSON data is converted straight into one exactly-sized
// buffer per input and binary inputs are zero-copy views into the body (moved into a
// shared owner the InferRequest keeps alive).
//
// Thread-safe (per-thread scratch only).
//
// Usage:
//   ASSIGN_OR_RETURN(InferRequest request,
//                    DecodeInferRequest(std::move(body), header_length, kMaxElements));
//   request.model_name = route_model_name;
#ifndef INFERA_CODEC_REQUEST_DECODER_H_
#define INFERA_CODEC_REQUEST_DECODER_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "api/infer_request.h"

namespace infera {

// `json_header_length`: the Inference-Header-Content-Length header's value when present.
absl::StatusOr<InferRequest> DecodeInferRequest(std::string body,
                                                std::optional<size_t> json_header_length,
                                                size_t max_elements);

// The same, parsing `*body` in place (its JSON text is overwritten: in-situ unescaping).
// A request with binary inputs takes the body over (they view it; `*body` is left
// empty); a JSON-only request copies everything it keeps, so `*body` keeps its capacity
// for the caller to reuse (the HTTP server's per-connection request buffer).
absl::StatusOr<InferRequest> DecodeInferRequestInPlace(std::string* body,
                                                       std::optional<size_t> json_header_length,
                                                       size_t max_elements);

}  // namespace infera

#endif  // INFERA_CODEC_REQUEST_DECODER_H_
