#include "gguf/gguf_value.h"

#include <cstring>

#include "common/check.h"

namespace infera::gguf {
namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
  return v;
}

}  // namespace

std::string_view GgufValueTypeName(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8: return "uint8";
    case GgufValueType::kInt8: return "int8";
    case GgufValueType::kUint16: return "uint16";
    case GgufValueType::kInt16: return "int16";
    case GgufValueType::kUint32: return "uint32";
    case GgufValueType::kInt32: return "int32";
    case GgufValueType::kFloat32: return "float32";
    case GgufValueType::kBool: return "bool";
    case GgufValueType::kString: return "string";
    case GgufValueType::kArray: return "array";
    case GgufValueType::kUint64: return "uint64";
    case GgufValueType::kInt64: return "int64";
    case GgufValueType::kFloat64: return "float64";
  }
  return "unknown type";
}

size_t GgufScalarSize(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool: return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16: return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32: return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64: return 8;
    case GgufValueType::kString:
    case GgufValueType::kArray: return 0;
  }
  return 0;
}

bool IsGgufInteger(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64: return true;
    default: return false;
  }
}

GgufValue GgufValue::Scalar(GgufValueType type, const uint8_t* p) {
  GgufValue v;
  v.type_ = type;
  switch (type) {
    case GgufValueType::kUint8: v.bits_ = Load<uint8_t>(p); break;
    case GgufValueType::kInt8: v.bits_ = static_cast<uint64_t>(static_cast<int64_t>(Load<int8_t>(p))); break;
    case GgufValueType::kUint16: v.bits_ = Load<uint16_t>(p); break;
    case GgufValueType::kInt16: v.bits_ = static_cast<uint64_t>(static_cast<int64_t>(Load<int16_t>(p))); break;
    case GgufValueType::kUint32: v.bits_ = Load<uint32_t>(p); break;
    case GgufValueType::kInt32: v.bits_ = static_cast<uint64_t>(static_cast<int64_t>(Load<int32_t>(p))); break;
    case GgufValueType::kUint64: v.bits_ = Load<uint64_t>(p); break;
    case GgufValueType::kInt64: v.bits_ = static_cast<uint64_t>(Load<int64_t>(p)); break;
    case GgufValueType::kFloat32: v.double_ = Load<float>(p); break;
    case GgufValueType::kFloat64: v.double_ = Load<double>(p); break;
    case GgufValueType::kBool: v.bits_ = Load<uint8_t>(p); break;
    case GgufValueType::kString:
    case GgufValueType::kArray: INFERA_CHECK(false) << "not a scalar type"; break;
  }
  return v;
}

GgufValue GgufValue::String(std::string_view text) {
  GgufValue v;
  v.type_ = GgufValueType::kString;
  v.string_ = text;
  return v;
}

GgufValue GgufValue::ScalarArray(GgufValueType element_type, uint64_t count, const uint8_t* bytes) {
  GgufValue v;
  v.type_ = GgufValueType::kArray;
  v.element_type_ = element_type;
  v.count_ = count;
  v.raw_ = bytes;
  return v;
}

GgufValue GgufValue::ItemArray(GgufValueType element_type, std::vector<GgufValue> items) {
  GgufValue v;
  v.type_ = GgufValueType::kArray;
  v.element_type_ = element_type;
  v.count_ = items.size();
  v.items_ = std::move(items);
  return v;
}

GgufValue GgufValue::ScalarAt(uint64_t i) const {
  INFERA_CHECK(type_ == GgufValueType::kArray && raw_ != nullptr && i < count_);
  return Scalar(element_type_, raw_ + i * GgufScalarSize(element_type_));
}

}  // namespace infera::gguf
