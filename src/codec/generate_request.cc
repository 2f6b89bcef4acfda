#include "codec/generate_request.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "api/float16.h"
#include "common/json_reader.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

constexpr std::string_view kId = "id";
constexpr std::string_view kParameters = "parameters";

std::string_view Key(const rapidjson::Value& name) { return {name.GetString(), name.GetStringLength()}; }

std::string_view KindName(const rapidjson::Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return "a boolean";
    case rapidjson::kObjectType: return "an object";
    case rapidjson::kArrayType: return "an array";
    case rapidjson::kStringType: return "a string";
    case rapidjson::kNumberType: return value.IsInt64() || value.IsUint64() ? "an integer" : "a number";
  }
  return "a value";
}

template <typename T>
void AppendRaw(T value, std::string& out) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

// An integer element within [min, max] (rapidjson keeps integers exact up to 64 bits).
template <typename T>
std::string AppendInteger(const rapidjson::Value& value, std::string& out) {
  if (!value.IsInt64() && !value.IsUint64()) return StrCat("expected an integer, got ", KindName(value));
  constexpr bool kSigned = std::numeric_limits<T>::is_signed;
  if (value.IsUint64() && value.GetUint64() <= static_cast<uint64_t>(std::numeric_limits<T>::max())) {
    AppendRaw(static_cast<T>(value.GetUint64()), out);
    return {};
  }
  if (kSigned && value.IsInt64() && value.GetInt64() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
      value.GetInt64() <= static_cast<int64_t>(std::numeric_limits<T>::max())) {
    AppendRaw(static_cast<T>(value.GetInt64()), out);
    return {};
  }
  return value.IsInt64() ? StrCat(value.GetInt64(), " is out of range") : StrCat(value.GetUint64(), " is out of range");
}

// A floating-point element: any JSON number whose magnitude the type can hold.
std::string AppendFloating(DataType dtype, const rapidjson::Value& value, std::string& out) {
  if (!value.IsNumber()) return StrCat("expected a number, got ", KindName(value));
  const double d = value.GetDouble();
  if (dtype == DataType::kFp64) {
    AppendRaw(d, out);
    return {};
  }
  const float f = static_cast<float>(d);
  if (std::isinf(f) && !std::isinf(d)) return StrCat(d, " is out of range");
  if (dtype == DataType::kFp32) {
    AppendRaw(f, out);
  } else if (dtype == DataType::kFp16) {
    const uint16_t half = FloatToHalf(f);
    if (std::isinf(HalfToFloat(half)) && !std::isinf(f)) return StrCat(d, " is out of range");
    AppendRaw(half, out);
  } else {
    const uint16_t bf16 = FloatToBf16(f);
    if (std::isinf(Bf16ToFloat(bf16)) && !std::isinf(f)) return StrCat(d, " is out of range");
    AppendRaw(bf16, out);
  }
  return {};
}

// Appends one element; returns what is wrong with it ("" when nothing is).
std::string AppendElement(DataType dtype, const rapidjson::Value& value, std::string& out) {
  switch (dtype) {
    case DataType::kBool:
      if (!value.IsBool()) return StrCat("expected true or false, got ", KindName(value));
      out.push_back(value.GetBool() ? 1 : 0);
      return {};
    case DataType::kBytes:
      if (!value.IsString()) return StrCat("expected a string, got ", KindName(value));
      AppendBytesElement(out, {value.GetString(), value.GetStringLength()});
      return {};
    case DataType::kInt8: return AppendInteger<int8_t>(value, out);
    case DataType::kInt16: return AppendInteger<int16_t>(value, out);
    case DataType::kInt32: return AppendInteger<int32_t>(value, out);
    case DataType::kInt64: return AppendInteger<int64_t>(value, out);
    case DataType::kUint8: return AppendInteger<uint8_t>(value, out);
    case DataType::kUint16: return AppendInteger<uint16_t>(value, out);
    case DataType::kUint32: return AppendInteger<uint32_t>(value, out);
    case DataType::kUint64: return AppendInteger<uint64_t>(value, out);
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kFp32:
    case DataType::kFp64: return AppendFloating(dtype, value, out);
    case DataType::kInvalid: break;
  }
  return "the input's datatype cannot be sent as JSON";
}

// Fills the variable dimensions of `shape` for `count` elements, as Triton does: the fixed
// dimensions must divide the count, the innermost variable one takes what is left, the
// others are 1. False when the shape cannot hold exactly `count` elements.
bool FillShape(Shape& shape, int64_t count) {
  int64_t left = count;
  bool zero_dim = false;  // a fixed dimension of 0: the shape holds nothing
  for (auto d = shape.rbegin(); d != shape.rend(); ++d) {
    if (*d < 0) continue;
    if (*d == 0) {
      zero_dim = true;
      continue;
    }
    if (left % *d != 0) return false;
    left /= *d;
  }
  for (auto d = shape.rbegin(); d != shape.rend(); ++d) {
    if (*d < 0) {
      *d = left;
      left = 1;
    }
  }
  return zero_dim ? count == 0 : left == 1;
}

absl::StatusOr<Tensor> ToTensor(const inference::ModelConfig& config, const inference::ModelInput& input,
                                const rapidjson::Value& value, size_t max_elements) {
  const std::string& name = input.name();
  if (value.IsObject() || value.IsNull()) {
    return absl::InvalidArgumentError(StrCat("input '", name, "' must be a JSON scalar or a flat array of scalars; got ",
                                             KindName(value)));
  }
  const DataType dtype = FromConfigDataType(input.data_type());
  const bool array = value.IsArray();
  const size_t count = array ? value.Size() : 1;
  if (count > max_elements) {
    return absl::InvalidArgumentError(StrCat("input '", name, "' has ", count, " elements, over the limit of ",
                                             max_elements));
  }
  std::string data;
  if (dtype != DataType::kBytes) data.reserve(count * DataTypeByteSize(dtype));
  for (size_t i = 0; i < count; ++i) {
    const rapidjson::Value& element = array ? value[static_cast<rapidjson::SizeType>(i)] : value;
    if (element.IsArray()) {
      return absl::InvalidArgumentError(StrCat("input '", name, "' must be a flat array; element ", i,
                                               " is an array"));
    }
    if (std::string problem = AppendElement(dtype, element, data); !problem.empty()) {
      return absl::InvalidArgumentError(StrCat("input '", name, "' (", DataTypeName(dtype), ")",
                                               array ? StrCat(" element ", i) : std::string(), ": ", problem));
    }
  }
  Shape shape = ClientShape(config, input.dims());
  const Shape declared = shape;
  if (!FillShape(shape, static_cast<int64_t>(count))) {
    return absl::InvalidArgumentError(StrCat("input '", name, "' has ", count, " elements; the model's shape ",
                                             ShapeToString(declared), " cannot take them"));
  }
  return Tensor{name, dtype, std::move(shape), Buffer::FromString(std::move(data))};
}

absl::StatusOr<ParameterValue> ToParameter(std::string_view key, const rapidjson::Value& value,
                                           const inference::ModelConfig& config) {
  if (value.IsString()) return ParameterValue(std::string(value.GetString(), value.GetStringLength()));
  if (value.IsBool()) return ParameterValue(value.GetBool());
  if (value.IsInt64()) return ParameterValue(value.GetInt64());
  if (value.IsUint64()) {
    return absl::InvalidArgumentError(StrCat("parameter '", key, "' is out of range (integers are int64)"));
  }
  if (value.IsNumber()) return ParameterValue(value.GetDouble());
  return absl::InvalidArgumentError(StrCat("'", key, "' is not an input of model '", config.name(),
                                           "', so it is a parameter, whose value must be a string, a number or "
                                           "a boolean; got ", KindName(value)));
}

}  // namespace

absl::StatusOr<GenerateRequestBody> GenerateRequestBody::Parse(std::string_view body) {
  GenerateRequestBody parsed;
  rapidjson::Document& document = parsed.document_;
  // An empty body is an empty object (Triton's generate accepts it; the model then says
  // which input is missing).
  RETURN_IF_ERROR(ReadJson(body.empty() ? std::string_view("{}") : body, "generate request body", document,
                           JsonLimits{kMaxGenerateBodyBytes, kMaxJsonDepth}));
  if (!document.IsObject()) {
    return absl::InvalidArgumentError(StrCat("the generate request body must be a JSON object, got ",
                                             KindName(document)));
  }
  std::set<std::string_view> keys;
  auto add_key = [&keys](std::string_view key) -> absl::Status {
    if (!keys.insert(key).second) {
      return absl::InvalidArgumentError(StrCat("'", key, "' is given more than once in the generate request"));
    }
    return absl::OkStatus();
  };
  for (const auto& member : document.GetObject()) {
    const std::string_view key = Key(member.name);
    if (key == kId) {
      if (!member.value.IsString()) {
        return absl::InvalidArgumentError(StrCat("'id' must be a string, got ", KindName(member.value)));
      }
    } else if (key == kParameters) {
      if (!member.value.IsObject()) {
        return absl::InvalidArgumentError(StrCat("'parameters' must be a JSON object, got ", KindName(member.value)));
      }
      for (const auto& parameter : member.value.GetObject()) RETURN_IF_ERROR(add_key(Key(parameter.name)));
      continue;
    }
    RETURN_IF_ERROR(add_key(key));
  }
  return parsed;
}

Parameters GenerateRequestBody::routing_parameters() const {
  Parameters out;
  auto take = [&out](const rapidjson::Value& object) {
    auto it = object.FindMember("routing_key");
    if (it == object.MemberEnd()) return;
    if (it->value.IsString()) out["routing_key"] = std::string(it->value.GetString(), it->value.GetStringLength());
    if (it->value.IsInt64()) out["routing_key"] = it->value.GetInt64();
  };
  take(document_);
  if (auto it = document_.FindMember(kParameters.data()); it != document_.MemberEnd()) take(it->value);
  return out;
}

absl::StatusOr<InferRequest> GenerateRequestBody::ToInferRequest(const inference::ModelConfig& config,
                                                                 size_t max_elements) const {
  InferRequest request;
  auto add = [&](std::string_view key, const rapidjson::Value& value) -> absl::Status {
    if (const inference::ModelInput* input = FindConfigInput(config, key)) {
      ASSIGN_OR_RETURN(Tensor tensor, ToTensor(config, *input, value, max_elements));
      request.inputs.push_back(std::move(tensor));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(ParameterValue parameter, ToParameter(key, value, config));
    request.parameters.emplace(std::string(key), std::move(parameter));
    return absl::OkStatus();
  };
  for (const auto& member : document_.GetObject()) {
    const std::string_view key = Key(member.name);
    if (key == kId) {
      request.id.assign(member.value.GetString(), member.value.GetStringLength());
    } else if (key == kParameters) {
      if (FindConfigInput(config, kParameters) != nullptr) {
        return absl::InvalidArgumentError(StrCat("model '", config.name(), "' has an input named 'parameters', which ",
                                                 "generate reserves for its parameters object"));
      }
      for (const auto& parameter : member.value.GetObject()) {
        RETURN_IF_ERROR(add(Key(parameter.name), parameter.value));
      }
    } else {
      RETURN_IF_ERROR(add(key, member.value));
    }
  }
  return request;
}

}  // namespace infera
