#include "gguf/gguf_metadata.h"

#include <limits>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera::gguf {
namespace {

absl::Status WrongType(std::string_view key, const GgufValue& value, std::string_view wanted) {
  std::string has(GgufValueTypeName(value.type()));
  if (value.type() == GgufValueType::kArray) has = StrCat("array of ", GgufValueTypeName(value.element_type()));
  return absl::InvalidArgumentError(
      StrCat("GGUF metadata key '", key, "' is ", has, ", expected ", wanted));
}

bool IsFloat(GgufValueType t) { return t == GgufValueType::kFloat32 || t == GgufValueType::kFloat64; }
bool IsSigned(GgufValueType t) {
  return t == GgufValueType::kInt8 || t == GgufValueType::kInt16 || t == GgufValueType::kInt32 ||
         t == GgufValueType::kInt64;
}

}  // namespace

bool GgufMetadata::Insert(std::string_view key, GgufValue value) {
  if (values_.count(key) > 0) return false;
  values_.emplace(std::string(key), std::move(value));
  keys_.emplace_back(key);
  return true;
}

const GgufValue* GgufMetadata::Find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

absl::StatusOr<const GgufValue*> GgufMetadata::Get(std::string_view key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return absl::NotFoundError(StrCat("GGUF metadata key '", key, "' is missing"));
  return value;
}

absl::StatusOr<std::string_view> GgufMetadata::GetString(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, Get(key));
  if (v->type() != GgufValueType::kString) return WrongType(key, *v, "string");
  return v->AsString();
}

absl::StatusOr<int64_t> GgufMetadata::GetInt(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, Get(key));
  if (!IsGgufInteger(v->type())) return WrongType(key, *v, "an integer");
  if (!IsSigned(v->type()) && v->AsUint() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(StrCat("GGUF metadata key '", key, "' = ", v->AsUint(), " is out of range"));
  }
  return v->AsInt();
}

absl::StatusOr<uint64_t> GgufMetadata::GetUint(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, Get(key));
  if (!IsGgufInteger(v->type())) return WrongType(key, *v, "an integer");
  if (IsSigned(v->type()) && v->AsInt() < 0) {
    return absl::InvalidArgumentError(StrCat("GGUF metadata key '", key, "' = ", v->AsInt(), " is negative"));
  }
  return v->AsUint();
}

absl::StatusOr<double> GgufMetadata::GetFloat(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, Get(key));
  if (!IsFloat(v->type())) return WrongType(key, *v, "float32 or float64");
  return v->AsDouble();
}

absl::StatusOr<bool> GgufMetadata::GetBool(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, Get(key));
  if (v->type() != GgufValueType::kBool) return WrongType(key, *v, "bool");
  return v->AsBool();
}

absl::StatusOr<const GgufValue*> GgufMetadata::GetArray(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, Get(key));
  if (v->type() != GgufValueType::kArray) return WrongType(key, *v, "an array");
  return v;
}

absl::StatusOr<std::vector<std::string_view>> GgufMetadata::GetStringArray(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, GetArray(key));
  if (v->element_type() != GgufValueType::kString) return WrongType(key, *v, "array of string");
  std::vector<std::string_view> out;
  out.reserve(v->items().size());
  for (const GgufValue& item : v->items()) out.push_back(item.AsString());
  return out;
}

absl::StatusOr<std::vector<int64_t>> GgufMetadata::GetIntArray(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, GetArray(key));
  const GgufValueType t = v->element_type();
  if (!IsGgufInteger(t)) return WrongType(key, *v, "array of integers");
  std::vector<int64_t> out;
  out.reserve(v->size());
  for (uint64_t i = 0; i < v->size(); ++i) {
    const GgufValue item = v->ScalarAt(i);
    if (!IsSigned(t) && item.AsUint() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(
          StrCat("GGUF metadata key '", key, "' element ", i, " = ", item.AsUint(), " is out of range"));
    }
    out.push_back(item.AsInt());
  }
  return out;
}

absl::StatusOr<std::vector<float>> GgufMetadata::GetFloatArray(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* v, GetArray(key));
  if (!IsFloat(v->element_type())) return WrongType(key, *v, "array of float32 or float64");
  std::vector<float> out;
  out.reserve(v->size());
  for (uint64_t i = 0; i < v->size(); ++i) out.push_back(static_cast<float>(v->ScalarAt(i).AsDouble()));
  return out;
}

}  // namespace infera::gguf
