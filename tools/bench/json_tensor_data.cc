#include "tools/bench/json_tensor_data.h"

#include <cstring>
#include <limits>

#include "api/float16.h"
#include "api/tensor.h"
#include "common/str_cat.h"

namespace infera::bench {
namespace {

template <typename T>
void AppendPod(T value, std::string* out) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

template <typename T>
bool AppendInteger(const rapidjson::Value& v, std::string* out) {
  if (v.IsInt64()) {
    const int64_t x = v.GetInt64();
    if constexpr (std::is_signed_v<T>) {
      if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) return false;
    } else {
      if (x < 0 || static_cast<uint64_t>(x) > std::numeric_limits<T>::max()) return false;
    }
    AppendPod(static_cast<T>(x), out);
    return true;
  }
  if (v.IsUint64()) {  // above INT64_MAX
    if constexpr (std::is_same_v<T, uint64_t>) {
      AppendPod(v.GetUint64(), out);
      return true;
    }
  }
  return false;
}

bool AppendElement(const rapidjson::Value& v, DataType dtype, std::string* out) {
  switch (dtype) {
    case DataType::kBool:
      if (!v.IsBool()) return false;
      out->push_back(v.GetBool() ? 1 : 0);
      return true;
    case DataType::kUint8: return AppendInteger<uint8_t>(v, out);
    case DataType::kUint16: return AppendInteger<uint16_t>(v, out);
    case DataType::kUint32: return AppendInteger<uint32_t>(v, out);
    case DataType::kUint64: return AppendInteger<uint64_t>(v, out);
    case DataType::kInt8: return AppendInteger<int8_t>(v, out);
    case DataType::kInt16: return AppendInteger<int16_t>(v, out);
    case DataType::kInt32: return AppendInteger<int32_t>(v, out);
    case DataType::kInt64: return AppendInteger<int64_t>(v, out);
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kFp32:
    case DataType::kFp64: {
      if (!v.IsNumber()) return false;
      const double d = v.GetDouble();
      if (dtype == DataType::kFp64) {
        AppendPod(d, out);
      } else if (dtype == DataType::kFp32) {
        AppendPod(static_cast<float>(d), out);
      } else {
        const float f = static_cast<float>(d);
        AppendPod(dtype == DataType::kFp16 ? FloatToHalf(f) : FloatToBf16(f), out);
      }
      return true;
    }
    case DataType::kBytes:
      if (!v.IsString()) return false;
      AppendBytesElement(*out, std::string_view(v.GetString(), v.GetStringLength()));
      return true;
    case DataType::kInvalid:
      return false;
  }
  return false;
}

}  // namespace

absl::Status AppendJsonTensorData(const rapidjson::Value& data, DataType dtype, std::string* out,
                                  int64_t* count) {
  if (data.IsArray()) {
    for (const auto& element : data.GetArray()) {
      if (absl::Status status = AppendJsonTensorData(element, dtype, out, count); !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }
  if (!AppendElement(data, dtype, out)) {
    return absl::InvalidArgumentError(
        StrCat("element ", *count, " is not a valid ", DataTypeName(dtype), " value"));
  }
  ++*count;
  return absl::OkStatus();
}

}  // namespace infera::bench
