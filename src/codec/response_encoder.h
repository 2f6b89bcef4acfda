// Encoding of KServe v2 HTTP/REST infer responses, with Triton's binary tensor extension.
//
// The body is JSON:
//
//   {"model_name": "m", "model_version": "1",
//    "id": "42",                                    omitted when empty
//    "parameters": {...},                           omitted when empty
//    "outputs": [{"name": "y", "datatype": "FP32", "shape": [2], "data": [0.5, 1]},
//                {"name": "z", "datatype": "INT64", "shape": [3],
//                 "parameters": {"binary_data_size": 24}}]}
//
// followed, when any output is binary, by the raw bytes of the binary outputs in output
// order; json_header_length then holds the JSON's size, for the route to send as the
// Inference-Header-Content-Length header.
//
// Contract:
//   - Which outputs are binary: OutputEncoding (the request's binary_data_output /
//     binary_data parameters). IMPORTANT: a BYTES output with an element that is not
//     valid UTF-8 is always sent as binary, whatever the request asked: JSON strings
//     cannot carry such bytes, and mangling them silently would be worse.
//   - JSON numbers round-trip exactly and compactly (json_data_writer.h): shortest
//     to_chars for FP32 / FP64 (FP16 and BF16 as float), NaN / Infinity / -Infinity for
//     non-finite values, BOOL as true / false, BYTES as strings.
//   - Binary data is the tensor's bytes as they are (little-endian elements; BYTES with
//     4-byte length prefixes), binary_data_size being their count.
//   - An output marked in InferResponse::shared_memory_outputs (written into a
//     shared-memory region) is sent as name, datatype, shape and those parameters, with
//     no data, as Triton does.
//   - An output whose data does not match its datatype and shape is an Internal error
//     naming it (the model, not the client, produced it). Nothing is thrown.
//
// Performance: one reserved std::string for the whole body (the caller's, when it passes
// one); the JSON structure, whose shape is fixed, is appended straight into it (literal
// keys, std::to_chars numbers; the bytes rapidjson::Writer wrote before, checked by a
// golden test against it), data arrays are formatted straight into it, and binary outputs
// are appended with one copy each.
//
// Thread-safe (no shared state).
//
// Usage:
//   ASSIGN_OR_RETURN(EncodedInferResponse encoded,
//                    EncodeInferResponse(response, OutputEncoding::FromRequest(request)));
//   if (encoded.json_header_length) headers.Add("Inference-Header-Content-Length", ...);
#ifndef INFERA_CODEC_RESPONSE_ENCODER_H_
#define INFERA_CODEC_RESPONSE_ENCODER_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "codec/output_encoding.h"

namespace infera {

struct EncodedInferResponse {
  std::string body;
  // Set iff any output is binary: the number of JSON bytes at the start of `body`.
  std::optional<size_t> json_header_length;
};

absl::StatusOr<EncodedInferResponse> EncodeInferResponse(const InferResponse& response,
                                                         const OutputEncoding& encoding);

// The same, into `*out`: its body is cleared and reused (a buffer with capacity left from
// an earlier response saves the allocation). On error `*out` is unspecified.
absl::Status EncodeInferResponse(const InferResponse& response, const OutputEncoding& encoding,
                                 EncodedInferResponse* out);

}  // namespace infera

#endif  // INFERA_CODEC_RESPONSE_ENCODER_H_
