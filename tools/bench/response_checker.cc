#include "tools/bench/response_checker.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "api/float16.h"
#include "common/str_cat.h"

namespace infera::bench {
namespace {

template <typename T>
T Load(const uint8_t* p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void AddSub(const Tensor& a, const Tensor& b, std::string* sum, std::string* diff) {
  const size_t n = a.data.size() / sizeof(T);
  sum->resize(n * sizeof(T));
  diff->resize(n * sizeof(T));
  for (size_t i = 0; i < n; ++i) {
    const T x = Load<T>(a.data.data(), i), y = Load<T>(b.data.data(), i);
    T s, d;
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      s = static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
      d = static_cast<T>(static_cast<U>(x) - static_cast<U>(y));
    } else {
      s = x + y;
      d = x - y;
    }
    std::memcpy(sum->data() + i * sizeof(T), &s, sizeof(T));
    std::memcpy(diff->data() + i * sizeof(T), &d, sizeof(T));
  }
}

bool AddSubFor(DataType dtype, const Tensor& a, const Tensor& b, std::string* sum, std::string* diff) {
  switch (dtype) {
    case DataType::kUint8: AddSub<uint8_t>(a, b, sum, diff); return true;
    case DataType::kUint16: AddSub<uint16_t>(a, b, sum, diff); return true;
    case DataType::kUint32: AddSub<uint32_t>(a, b, sum, diff); return true;
    case DataType::kUint64: AddSub<uint64_t>(a, b, sum, diff); return true;
    case DataType::kInt8: AddSub<int8_t>(a, b, sum, diff); return true;
    case DataType::kInt16: AddSub<int16_t>(a, b, sum, diff); return true;
    case DataType::kInt32: AddSub<int32_t>(a, b, sum, diff); return true;
    case DataType::kInt64: AddSub<int64_t>(a, b, sum, diff); return true;
    case DataType::kFp32: AddSub<float>(a, b, sum, diff); return true;
    case DataType::kFp64: AddSub<double>(a, b, sum, diff); return true;
    default: return false;
  }
}

// Element i of a fixed-size tensor as text, for messages.
std::string ElementText(const Tensor& t, size_t i) {
  const uint8_t* p = t.data.data();
  switch (t.dtype) {
    case DataType::kBool: return p[i] ? "true" : "false";
    case DataType::kUint8: return StrCat(Load<uint8_t>(p, i));
    case DataType::kUint16: return StrCat(Load<uint16_t>(p, i));
    case DataType::kUint32: return StrCat(Load<uint32_t>(p, i));
    case DataType::kUint64: return StrCat(Load<uint64_t>(p, i));
    case DataType::kInt8: return StrCat(Load<int8_t>(p, i));
    case DataType::kInt16: return StrCat(Load<int16_t>(p, i));
    case DataType::kInt32: return StrCat(Load<int32_t>(p, i));
    case DataType::kInt64: return StrCat(Load<int64_t>(p, i));
    case DataType::kFp16: return StrCat(HalfToFloat(Load<uint16_t>(p, i)));
    case DataType::kBf16: return StrCat(Bf16ToFloat(Load<uint16_t>(p, i)));
    case DataType::kFp32: return StrCat(Load<float>(p, i));
    case DataType::kFp64: return StrCat(Load<double>(p, i));
    default: return "?";
  }
}

double FloatElement(const Tensor& t, size_t i) {
  const uint8_t* p = t.data.data();
  switch (t.dtype) {
    case DataType::kFp16: return HalfToFloat(Load<uint16_t>(p, i));
    case DataType::kBf16: return Bf16ToFloat(Load<uint16_t>(p, i));
    case DataType::kFp32: return Load<float>(p, i);
    default: return Load<double>(p, i);
  }
}

absl::Status CompareValues(const Tensor& e, const Tensor& a, Tolerance tol) {
  const bool is_float = e.dtype == DataType::kFp16 || e.dtype == DataType::kBf16 ||
                        e.dtype == DataType::kFp32 || e.dtype == DataType::kFp64;
  if (e.dtype == DataType::kBytes || !is_float) {
    if (e.data.AsStringView() == a.data.AsStringView()) return absl::OkStatus();
    if (e.dtype == DataType::kBytes || e.data.size() != a.data.size()) {
      return absl::InvalidArgumentError(StrCat(e.name, " differs from the expected bytes"));
    }
    const size_t width = DataTypeByteSize(e.dtype);
    for (size_t i = 0; i * width < e.data.size(); ++i) {
      if (std::memcmp(e.data.data() + i * width, a.data.data() + i * width, width) != 0) {
        return absl::InvalidArgumentError(StrCat(e.name, "[", i, "] is ", ElementText(a, i),
                                                 ", expected ", ElementText(e, i)));
      }
    }
    return absl::OkStatus();
  }
  const size_t n = e.data.size() / DataTypeByteSize(e.dtype);
  for (size_t i = 0; i < n; ++i) {
    const double x = FloatElement(e, i), y = FloatElement(a, i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (!(std::abs(x - y) <= tol.atol + tol.rtol * std::abs(x))) {
      return absl::InvalidArgumentError(
          StrCat(e.name, "[", i, "] is ", ElementText(a, i), ", expected ", ElementText(e, i)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> BuiltinReferenceOutputs(std::string_view platform,
                                                            const std::vector<TensorSpec>& outputs,
                                                            const std::vector<Tensor>& inputs) {
  std::vector<Tensor> expected;
  if (platform == "add_sub") {
    if (inputs.size() != 2 || outputs.size() != 2 || inputs[0].dtype != inputs[1].dtype ||
        inputs[0].shape != inputs[1].shape) {
      return absl::InvalidArgumentError("add_sub reference needs 2 inputs of one datatype and shape");
    }
    std::string sum, diff;
    if (!AddSubFor(inputs[0].dtype, inputs[0], inputs[1], &sum, &diff)) {
      return absl::InvalidArgumentError(
          StrCat("no add_sub reference for ", DataTypeName(inputs[0].dtype)));
    }
    expected.push_back({outputs[0].name, inputs[0].dtype, inputs[0].shape, Buffer::FromString(std::move(sum))});
    expected.push_back({outputs[1].name, inputs[0].dtype, inputs[0].shape, Buffer::FromString(std::move(diff))});
    return expected;
  }
  if (platform == "identity") {
    if (inputs.size() != outputs.size()) {
      return absl::InvalidArgumentError("identity reference needs as many outputs as inputs");
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      expected.push_back({outputs[i].name, inputs[i].dtype, inputs[i].shape, inputs[i].data});
    }
    return expected;
  }
  return absl::FailedPreconditionError(
      StrCat("--check: no built-in reference for platform '", platform,
             "'; give expected outputs as \"validation_data\" in an --input-data file"));
}

absl::Status CompareOutputs(const std::vector<Tensor>& expected, const std::vector<Tensor>& actual,
                            Tolerance tolerance) {
  for (const Tensor& e : expected) {
    const Tensor* a = nullptr;
    for (const Tensor& t : actual) {
      if (t.name == e.name) a = &t;
    }
    if (!a) return absl::InvalidArgumentError(StrCat("output ", e.name, " is missing"));
    if (a->dtype != e.dtype) {
      return absl::InvalidArgumentError(StrCat(e.name, " is ", DataTypeName(a->dtype), ", expected ",
                                               DataTypeName(e.dtype)));
    }
    const bool shape_known = e.shape != Shape{-1};
    if (shape_known ? a->shape != e.shape : a->data.size() != e.data.size()) {
      return absl::InvalidArgumentError(StrCat(e.name, " has shape ", ShapeToString(a->shape),
                                               ", expected ", ShapeToString(e.shape)));
    }
    if (absl::Status s = CompareValues(e, *a, tolerance); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace infera::bench
