// The answers of Triton's generate extension (docs/protocol/extension_generate.md): one
// InferResponse as a JSON object, alone (`generate`, application/json) or as a
// Server-Sent Event (`generate_stream`, text/event-stream).
//
//   {"id": "42",                 only when the request had an id
//    "model_name": "repeat_int32",
//    "model_version": "1",       a string, as Triton's
//    "finish_reason": "stop",    each response parameter, by name
//    "OUT": 7,                   each output by name: its only element when it has one,
//    "text_output": "…",         else a flat array of its elements (row-major)
//    "LOGITS": [0.5, 0.25]}
//
// Elements are written as the KServe JSON codec writes them (json_data_writer.h: BYTES as
// strings, BOOL as true / false, floats shortest round-trip, NaN / Infinity tokens). A
// response parameter named like a reserved key or an output is left out (the output
// wins). Errors are Internal (the model's answer cannot be written): an output named
// id / model_name / model_version, a BYTES element that is not valid UTF-8 (JSON
// cannot carry it: /infer's binary_data can), data that does not match its shape.
//
// SSE framing (Triton's): each response is "data: <object>\n\n"; an error after the
// stream started is "data: {\"error\": \"<message>\"}\n\n".
//
// Thread-safe (pure functions).
#ifndef INFERA_CODEC_GENERATE_RESPONSE_H_
#define INFERA_CODEC_GENERATE_RESPONSE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "api/infer_request.h"

namespace infera {

// Replaces `*out` with the response's JSON object.
absl::Status EncodeGenerateResponse(const InferResponse& response, std::string* out);

// Appends the response as one Server-Sent Event ("data: {...}\n\n") to `*out`.
absl::Status AppendGenerateEvent(const InferResponse& response, std::string* out);

// The event that reports an error in a started stream.
std::string GenerateErrorEvent(std::string_view message);

}  // namespace infera

#endif  // INFERA_CODEC_GENERATE_RESPONSE_H_
