// Conversion of one JSON tensor-data element to its binary form.
//
// The request decoder parses with rapidjson in situ and with kParseNumbersAsStringsFlag,
// so a number reaches this code as the characters the client wrote ("0.1", "-3", "NaN").
// Converting from text with std::from_chars straight into the target type gives correctly
// rounded FP32/FP64 values (no detour through double) and exact integer range checks
// (300 for INT8, -1 for UINT8, 1.5 or 1e2 for any integer type are errors).
//
// Conversion rules per datatype:
//   BOOL           JSON true / false only                    -> 1 byte, 0 or 1
//   INT*, UINT*    JSON integer tokens within the type's range
//   FP32, FP64     any JSON number, NaN, Infinity, -Infinity; finite values that round to
//                  infinity are out of range; values below the smallest subnormal become 0
//   FP16, BF16     as FP32, then rounded to nearest even (api/float16.h); finite values
//                  that overflow the 16-bit format are out of range
//   BYTES          JSON strings -> 4-byte little-endian length + bytes (api/tensor.h)
//
// Thread-safe (pure functions).
#ifndef INFERA_CODEC_JSON_ELEMENT_H_
#define INFERA_CODEC_JSON_ELEMENT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "api/data_type.h"
#include "codec/growable_buffer.h"

namespace infera {

enum class JsonTokenKind : uint8_t { kNull, kBool, kNumber, kString };

// One JSON scalar. `text` is the number's characters as written or the unescaped string
// (a view into the request body); unused for null and booleans.
struct JsonToken {
  std::string_view text;
  JsonTokenKind kind = JsonTokenKind::kNull;
  bool bool_value = false;
};

enum class ElementError : uint8_t {
  kNone = 0,
  kWrongKind,   // e.g. a string for FP32, a number for BOOL
  kNotInteger,  // a fraction or exponent for an integer type
  kOutOfRange,  // does not fit the datatype
};

// Appends `token` converted to `dtype` to `out`. On error `out` is left unchanged.
// REQUIRES: dtype is a valid datatype (not kInvalid).
ElementError AppendJsonElement(DataType dtype, const JsonToken& token, GrowableBuffer& out);

// Explains an error from AppendJsonElement, e.g. "300 is out of range for INT8
// [-128, 127]" or "expected a number for FP32, got string \"abc\"".
std::string DescribeElementError(ElementError error, DataType dtype, const JsonToken& token);

// Parses a JSON number token that must be an integer in int64 range ("12", "-3"; not
// "1.0", "1e2"). Used for shapes and parameters.
bool ParseJsonInt64(std::string_view text, int64_t* value);

// Parses any JSON number token (including NaN / Infinity) as a double. Returns false only
// when the magnitude overflows a double.
bool ParseJsonDouble(std::string_view text, double* value);

}  // namespace infera

#endif  // INFERA_CODEC_JSON_ELEMENT_H_
