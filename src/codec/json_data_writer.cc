#include "codec/json_data_writer.h"

#include <charconv>
#include <cmath>

#include "api/float16.h"

namespace infera {
namespace {

// Longest shortest-form texts: "-1.1754944e-38" (14), "-2.2250738585072014e-308" (24),
// "-9223372036854775808" (20), "18446744073709551615" (20).
constexpr size_t kMaxNumberChars = 32;

// Returns false (after writing the token) when `value` is not finite.
template <typename T>
bool WriteNonFinite(T value, JsonStringStream& out) {
  if (std::isfinite(value)) return false;
  if (std::isnan(value)) {
    out.Append("NaN", 3);
  } else if (value > 0) {
    out.Append("Infinity", 8);
  } else {
    out.Append("-Infinity", 9);
  }
  return true;
}

template <typename T>
void WriteNumber(T value, JsonStringStream& out) {
  char* p = out.Reserve(kMaxNumberChars);
  const std::to_chars_result result = std::to_chars(p, p + kMaxNumberChars, value);
  out.Advance(static_cast<size_t>(result.ptr - p));
}

// Writes `count` elements of type T, each through `write(T, out)`.
template <typename T, typename WriteFn>
void WriteArray(const uint8_t* data, size_t count, JsonStringStream& out, WriteFn write) {
  out.Put('[');
  for (size_t i = 0; i < count; ++i) {
    if (i != 0) out.Put(',');
    T value;
    std::memcpy(&value, data + i * sizeof(T), sizeof(T));
    write(value, out);
  }
  out.Put(']');
}

template <typename T>
void WriteIntegers(const uint8_t* data, size_t count, JsonStringStream& out) {
  WriteArray<T>(data, count, out, [](T v, JsonStringStream& o) { WriteNumber(v, o); });
}

bool NeedsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

}  // namespace

void WriteJsonFloat(float value, JsonStringStream& out) {
  if (!WriteNonFinite(value, out)) WriteNumber(value, out);
}

void WriteJsonDouble(double value, JsonStringStream& out) {
  if (!WriteNonFinite(value, out)) WriteNumber(value, out);
}

namespace {

constexpr char kLowerHex[] = "0123456789abcdef";
constexpr char kUpperHex[] = "0123456789ABCDEF";

// Escapes a control character as \u00XX with the digits of `kHex`.
template <const char* kHex>
void WriteEscapedString(std::string_view text, JsonStringStream& out) {
  out.Put('"');
  size_t run_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (!NeedsEscape(c)) continue;
    out.Append(text.data() + run_start, i - run_start);
    run_start = i + 1;
    char* p = out.Reserve(6);
    p[0] = '\\';
    switch (c) {
      case '"':
        p[1] = '"';
        out.Advance(2);
        break;
      case '\\':
        p[1] = '\\';
        out.Advance(2);
        break;
      case '\n':
        p[1] = 'n';
        out.Advance(2);
        break;
      case '\r':
        p[1] = 'r';
        out.Advance(2);
        break;
      case '\t':
        p[1] = 't';
        out.Advance(2);
        break;
      case '\b':
        p[1] = 'b';
        out.Advance(2);
        break;
      case '\f':
        p[1] = 'f';
        out.Advance(2);
        break;
      default:
        p[1] = 'u';
        p[2] = '0';
        p[3] = '0';
        p[4] = kHex[c >> 4];
        p[5] = kHex[c & 0xf];
        out.Advance(6);
    }
  }
  out.Append(text.data() + run_start, text.size() - run_start);
  out.Put('"');
}

}  // namespace

void WriteJsonString(std::string_view text, JsonStringStream& out) { WriteEscapedString<kLowerHex>(text, out); }

void WriteJsonStringRapidJsonEscapes(std::string_view text, JsonStringStream& out) {
  WriteEscapedString<kUpperHex>(text, out);
}

void WriteJsonData(const Tensor& tensor, JsonStringStream& out) {
  const uint8_t* data = tensor.data.data();
  const size_t size = tensor.data.size();
  switch (tensor.dtype) {
    case DataType::kFp32:
      return WriteArray<float>(data, size / 4, out,
                               [](float v, JsonStringStream& o) { WriteJsonFloat(v, o); });
    case DataType::kFp64:
      return WriteArray<double>(data, size / 8, out,
                                [](double v, JsonStringStream& o) { WriteJsonDouble(v, o); });
    case DataType::kFp16:
      return WriteArray<uint16_t>(data, size / 2, out, [](uint16_t h, JsonStringStream& o) {
        WriteJsonFloat(HalfToFloat(h), o);
      });
    case DataType::kBf16:
      return WriteArray<uint16_t>(data, size / 2, out, [](uint16_t h, JsonStringStream& o) {
        WriteJsonFloat(Bf16ToFloat(h), o);
      });
    case DataType::kBool:
      return WriteArray<uint8_t>(data, size, out, [](uint8_t b, JsonStringStream& o) {
        if (b != 0) {
          o.Append("true", 4);
        } else {
          o.Append("false", 5);
        }
      });
    case DataType::kUint8: return WriteIntegers<uint8_t>(data, size, out);
    case DataType::kUint16: return WriteIntegers<uint16_t>(data, size / 2, out);
    case DataType::kUint32: return WriteIntegers<uint32_t>(data, size / 4, out);
    case DataType::kUint64: return WriteIntegers<uint64_t>(data, size / 8, out);
    case DataType::kInt8: return WriteIntegers<int8_t>(data, size, out);
    case DataType::kInt16: return WriteIntegers<int16_t>(data, size / 2, out);
    case DataType::kInt32: return WriteIntegers<int32_t>(data, size / 4, out);
    case DataType::kInt64: return WriteIntegers<int64_t>(data, size / 8, out);
    case DataType::kBytes: {
      out.Put('[');
      bool first = true;
      ForEachBytesElement(tensor.data.AsStringView(), [&](std::string_view element) {
        if (!first) out.Put(',');
        first = false;
        WriteJsonString(element, out);
        return true;
      });
      out.Put(']');
      return;
    }
    case DataType::kInvalid: break;
  }
  out.Append("[]", 2);
}

size_t EstimateJsonDataSize(const Tensor& tensor) {
  // Characters per element, separator included, for typical values.
  size_t per_element;
  switch (tensor.dtype) {
    case DataType::kBool: per_element = 6; break;
    case DataType::kUint8:
    case DataType::kInt8: per_element = 5; break;
    case DataType::kUint16:
    case DataType::kInt16: per_element = 7; break;
    case DataType::kUint32:
    case DataType::kInt32: per_element = 12; break;
    case DataType::kFp16:
    case DataType::kBf16: per_element = 15; break;
    case DataType::kFp32: per_element = 16; break;
    case DataType::kUint64:
    case DataType::kInt64: per_element = 21; break;
    case DataType::kFp64: per_element = 25; break;
    default:  // BYTES: each 4-byte prefix becomes two quotes and a comma
      return tensor.data.size() + 2;
  }
  const size_t element_size = DataTypeByteSize(tensor.dtype);
  return tensor.data.size() / element_size * per_element + 2;
}

}  // namespace infera
