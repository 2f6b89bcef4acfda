// Writing tensor data as JSON text: the "data" arrays of KServe v2 responses.
//
// Numbers are written so that they round-trip exactly and compactly: std::to_chars's
// shortest representation (FP32 as float, FP64 as double, FP16 / BF16 converted to float
// first), integers in full, BOOL as true / false, and the non-finite values as the tokens
// rapidjson's kParseNanAndInfFlag reads: NaN, Infinity, -Infinity. BYTES elements are
// written as JSON strings (quotes, backslashes and control characters escaped; other
// bytes copied as they are, so callers must check IsValidUtf8 first, see
// response_encoder.h).
//
// The functions write into a JsonStringStream directly (no rapidjson Writer per element):
// this is the bulk of a response's encoding time.
//
// Thread-safe (no shared state); each call writes only to its stream.
#ifndef INFERA_CODEC_JSON_DATA_WRITER_H_
#define INFERA_CODEC_JSON_DATA_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "api/tensor.h"
#include "codec/json_string_stream.h"

namespace infera {

// Writes the elements of `tensor` as one flat JSON array ("[1,2,3]").
// REQUIRES: ValidateTensorData(tensor).ok().
void WriteJsonData(const Tensor& tensor, JsonStringStream& out);

// An upper bound, for most tensors, of the bytes WriteJsonData writes (for reserving).
size_t EstimateJsonDataSize(const Tensor& tensor);

void WriteJsonFloat(float value, JsonStringStream& out);
void WriteJsonDouble(double value, JsonStringStream& out);
// A JSON string literal, quotes included: ", \\ and control characters escaped (\n, \t, …,
// else \u00xx in lower-case hex), every other byte copied.
void WriteJsonString(std::string_view text, JsonStringStream& out);
// The same escapes with upper-case hex (\u001F), byte for byte what rapidjson::Writer
// writes for a string: the response encoder's names, ids and parameters.
void WriteJsonStringRapidJsonEscapes(std::string_view text, JsonStringStream& out);

// Calls `fn(std::string_view element)` for each element of serialized BYTES data; stops
// early (returning false) when `fn` returns false.
// REQUIRES: `data` is well-formed (SplitBytesElements would succeed).
template <typename Fn>
bool ForEachBytesElement(std::string_view data, Fn&& fn) {
  size_t offset = 0;
  while (offset + 4 <= data.size()) {
    uint32_t length;
    std::memcpy(&length, data.data() + offset, 4);
    offset += 4;
    if (!fn(data.substr(offset, length))) return false;
    offset += length;
  }
  return true;
}

}  // namespace infera

#endif  // INFERA_CODEC_JSON_DATA_WRITER_H_
