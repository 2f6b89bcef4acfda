// GgufValue: one metadata value of a GGUF file — a scalar, a string, or an array of
// any of these (arrays may nest).
//
// Values do not own text or array bytes: strings are string_views into the file's
// bytes and arrays of numbers point at their little-endian bytes there (possibly
// unaligned; read them through the accessors). They stay valid while the GgufFile that
// produced them lives. Arrays of strings and of arrays hold one GgufValue per element.
//
// Thread-safe after construction (const).
#ifndef INFERA_GGUF_GGUF_VALUE_H_
#define INFERA_GGUF_GGUF_VALUE_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace infera::gguf {

// The value type ids as written in files.
enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
inline constexpr uint32_t kMaxGgufValueType = 12;

// "uint8", "string", "array", ... ("type <id>" outside the enum).
std::string_view GgufValueTypeName(GgufValueType type);
// Bytes of one scalar of `type` (0 for string and array, whose size is in the file).
size_t GgufScalarSize(GgufValueType type);
bool IsGgufInteger(GgufValueType type);

class GgufValue {
 public:
  GgufValueType type() const { return type_; }

  // Scalars. Each REQUIRES the matching type class: an integer type for AsInt /
  // AsUint (the caller checks the range: AsUint of a negative int is a wrapped value),
  // a float type for AsDouble, bool for AsBool, string for AsString.
  int64_t AsInt() const { return static_cast<int64_t>(bits_); }
  uint64_t AsUint() const { return bits_; }
  double AsDouble() const { return double_; }
  bool AsBool() const { return bits_ != 0; }
  std::string_view AsString() const { return string_; }

  // Arrays (REQUIRES type() == kArray).
  GgufValueType element_type() const { return element_type_; }
  uint64_t size() const { return count_; }
  // Element i of an array of scalars, as a GgufValue (REQUIRES i < size()).
  GgufValue ScalarAt(uint64_t i) const;
  // Elements of an array of strings or of arrays.
  const std::vector<GgufValue>& items() const { return items_; }

  // Builders used by the parser.
  static GgufValue Scalar(GgufValueType type, const uint8_t* little_endian_bytes);
  static GgufValue String(std::string_view text);
  static GgufValue ScalarArray(GgufValueType element_type, uint64_t count, const uint8_t* bytes);
  static GgufValue ItemArray(GgufValueType element_type, std::vector<GgufValue> items);

 private:
  GgufValueType type_ = GgufValueType::kUint8;
  uint64_t bits_ = 0;   // integers (sign-extended) and bool
  double double_ = 0;   // float32 / float64
  std::string_view string_;
  GgufValueType element_type_ = GgufValueType::kUint8;
  uint64_t count_ = 0;
  const uint8_t* raw_ = nullptr;  // arrays of scalars
  std::vector<GgufValue> items_;  // arrays of strings or arrays
};

}  // namespace infera::gguf

#endif  // INFERA_GGUF_GGUF_VALUE_H_
