#include "codec/json_element.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

#include "api/float16.h"
#include "common/str_cat.h"

namespace infera {
namespace {

bool HasFractionOrExponent(std::string_view text) {
  return text.find_first_of(".eEIN") != std::string_view::npos;  // "Inf", "NaN" too
}

// True when a number token whose conversion overflowed is in fact tiny (an underflow):
// a negative exponent, or a zero integer part.
bool IsUnderflow(std::string_view text) {
  const size_t e = text.find_first_of("eE");
  if (e != std::string_view::npos) return e + 1 < text.size() && text[e + 1] == '-';
  if (!text.empty() && text[0] == '-') text.remove_prefix(1);
  return !text.empty() && text[0] == '0';
}

template <typename T>
ElementError ParseInteger(const JsonToken& token, T* value) {
  if (token.kind != JsonTokenKind::kNumber) return ElementError::kWrongKind;
  const char* first = token.text.data();
  const char* last = first + token.text.size();
  auto [ptr, ec] = std::from_chars(first, last, *value);
  if (ec == std::errc() && ptr == last) return ElementError::kNone;
  if (HasFractionOrExponent(token.text)) return ElementError::kNotInteger;
  if constexpr (std::is_unsigned_v<T>) {
    // from_chars rejects a sign for unsigned types; "-0" is still zero.
    if (first != last && *first == '-') {
      T magnitude;
      auto [p2, ec2] = std::from_chars(first + 1, last, magnitude);
      if (ec2 == std::errc() && p2 == last && magnitude == 0) {
        *value = 0;
        return ElementError::kNone;
      }
    }
  }
  return ElementError::kOutOfRange;
}

template <typename T>
ElementError ParseFloating(const JsonToken& token, T* value) {
  if (token.kind != JsonTokenKind::kNumber) return ElementError::kWrongKind;
  // libstdc++ 12's from_chars (fast_float inside) is correctly rounded and as fast as a
  // hand-written Clinger fast path measured here (~20 ns for "-1.2345").
  const char* first = token.text.data();
  const char* last = first + token.text.size();
  auto [ptr, ec] = std::from_chars(first, last, *value);
  if (ec == std::errc() && ptr == last) return ElementError::kNone;
  if (ec != std::errc::result_out_of_range) return ElementError::kWrongKind;
  // Out of range: either a real overflow or an underflow, which from_chars also reports.
  if constexpr (std::is_same_v<T, float>) {
    double d;
    auto [p2, ec2] = std::from_chars(first, last, d);
    if (ec2 == std::errc() && p2 == last) {
      if (std::fabs(d) > std::numeric_limits<float>::max()) return ElementError::kOutOfRange;
      *value = static_cast<float>(d);  // subnormal or zero
      return ElementError::kNone;
    }
  }
  if (!IsUnderflow(token.text)) return ElementError::kOutOfRange;
  *value = token.text[0] == '-' ? -T{0} : T{0};
  return ElementError::kNone;
}

template <typename T>
ElementError AppendInteger(const JsonToken& token, GrowableBuffer& out) {
  T value;
  const ElementError error = ParseInteger(token, &value);
  if (error == ElementError::kNone) std::memcpy(out.Append(sizeof(T)), &value, sizeof(T));
  return error;
}

template <typename T>
ElementError AppendFloating(const JsonToken& token, GrowableBuffer& out) {
  T value;
  const ElementError error = ParseFloating(token, &value);
  if (error == ElementError::kNone) std::memcpy(out.Append(sizeof(T)), &value, sizeof(T));
  return error;
}

// FP16 / BF16: parse as float, then round to the 16-bit format.
template <uint16_t (*Convert)(float), uint16_t kInfinityBits>
ElementError Append16(const JsonToken& token, GrowableBuffer& out) {
  float value;
  const ElementError error = ParseFloating(token, &value);
  if (error != ElementError::kNone) return error;
  const uint16_t bits = Convert(value);
  if ((bits & 0x7fffu) == kInfinityBits && std::isfinite(value)) {
    return ElementError::kOutOfRange;
  }
  std::memcpy(out.Append(2), &bits, 2);
  return ElementError::kNone;
}

ElementError AppendBytes(const JsonToken& token, GrowableBuffer& out) {
  if (token.kind != JsonTokenKind::kString) return ElementError::kWrongKind;
  const uint32_t length = static_cast<uint32_t>(token.text.size());
  uint8_t* p = out.Append(4 + token.text.size());
  std::memcpy(p, &length, 4);  // little-endian hosts only, as api/tensor.cc
  if (length > 0) std::memcpy(p + 4, token.text.data(), length);
  return ElementError::kNone;
}

template <typename T>
std::string IntegerRange() {
  return StrCat("[", std::numeric_limits<T>::min(), ", ", std::numeric_limits<T>::max(), "]");
}

std::string RangeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kUint8: return IntegerRange<uint8_t>();
    case DataType::kUint16: return IntegerRange<uint16_t>();
    case DataType::kUint32: return IntegerRange<uint32_t>();
    case DataType::kUint64: return IntegerRange<uint64_t>();
    case DataType::kInt8: return IntegerRange<int8_t>();
    case DataType::kInt16: return IntegerRange<int16_t>();
    case DataType::kInt32: return IntegerRange<int32_t>();
    case DataType::kInt64: return IntegerRange<int64_t>();
    case DataType::kFp16: return "(largest finite 65504)";
    case DataType::kBf16: return "(largest finite 3.38953139e+38)";
    case DataType::kFp32: return "(largest finite 3.40282347e+38)";
    default: return "";
  }
}

const char* ExpectedKind(DataType dtype) {
  switch (dtype) {
    case DataType::kBool: return "true or false";
    case DataType::kFp16:
    case DataType::kFp32:
    case DataType::kFp64:
    case DataType::kBf16: return "a number";
    case DataType::kBytes: return "a string";
    default: return "an integer";
  }
}

// The token as the client wrote it, shortened for an error message.
std::string DescribeToken(const JsonToken& token) {
  constexpr size_t kMaxShown = 32;
  switch (token.kind) {
    case JsonTokenKind::kNull: return "null";
    case JsonTokenKind::kBool: return token.bool_value ? "true" : "false";
    case JsonTokenKind::kNumber: return StrCat("number ", token.text.substr(0, kMaxShown));
    case JsonTokenKind::kString:
      return StrCat("string \"", token.text.substr(0, kMaxShown),
                    token.text.size() > kMaxShown ? "...\"" : "\"");
  }
  return "";
}

}  // namespace

ElementError AppendJsonElement(DataType dtype, const JsonToken& token, GrowableBuffer& out) {
  switch (dtype) {
    case DataType::kFp32: return AppendFloating<float>(token, out);
    case DataType::kInt32: return AppendInteger<int32_t>(token, out);
    case DataType::kInt64: return AppendInteger<int64_t>(token, out);
    case DataType::kFp64: return AppendFloating<double>(token, out);
    case DataType::kBytes: return AppendBytes(token, out);
    case DataType::kBool:
      if (token.kind != JsonTokenKind::kBool) return ElementError::kWrongKind;
      *out.Append(1) = token.bool_value ? 1 : 0;
      return ElementError::kNone;
    case DataType::kUint8: return AppendInteger<uint8_t>(token, out);
    case DataType::kUint16: return AppendInteger<uint16_t>(token, out);
    case DataType::kUint32: return AppendInteger<uint32_t>(token, out);
    case DataType::kUint64: return AppendInteger<uint64_t>(token, out);
    case DataType::kInt8: return AppendInteger<int8_t>(token, out);
    case DataType::kInt16: return AppendInteger<int16_t>(token, out);
    case DataType::kFp16: return Append16<FloatToHalf, 0x7c00>(token, out);
    case DataType::kBf16: return Append16<FloatToBf16, 0x7f80>(token, out);
    case DataType::kInvalid: break;
  }
  return ElementError::kWrongKind;
}

std::string DescribeElementError(ElementError error, DataType dtype, const JsonToken& token) {
  const std::string_view type_name = DataTypeName(dtype);
  switch (error) {
    case ElementError::kNone: return "";
    case ElementError::kWrongKind:
      return StrCat("expected ", ExpectedKind(dtype), " for ", type_name, ", got ",
                    DescribeToken(token));
    case ElementError::kNotInteger:
      return StrCat("expected an integer for ", type_name, ", got ", DescribeToken(token));
    case ElementError::kOutOfRange:
      return StrCat(DescribeToken(token), " is out of range for ", type_name, " ", RangeOf(dtype));
  }
  return "";
}

bool ParseJsonInt64(std::string_view text, int64_t* value) {
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, *value);
  return ec == std::errc() && ptr == last;
}

bool ParseJsonDouble(std::string_view text, double* value) {
  JsonToken token{text, JsonTokenKind::kNumber, false};
  return ParseFloating(token, value) == ElementError::kNone;
}

}  // namespace infera
