#include <cstring>
#include <type_traits>

#include "api/float16.h"
#include "backend/builtin/builtin_backends.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

// Integers wrap (computed unsigned: signed overflow would be undefined behaviour).
template <typename T>
void AddSubTyped(const uint8_t* a_bytes, const uint8_t* b_bytes, uint8_t* sum_bytes,
                 uint8_t* diff_bytes, size_t n) {
  // Inputs may be unaligned views into a request body: read through memcpy.
  for (size_t i = 0; i < n; ++i) {
    T a, b, sum, diff;
    std::memcpy(&a, a_bytes + i * sizeof(T), sizeof(T));
    std::memcpy(&b, b_bytes + i * sizeof(T), sizeof(T));
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      sum = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      diff = static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    } else {
      sum = a + b;
      diff = a - b;
    }
    std::memcpy(sum_bytes + i * sizeof(T), &sum, sizeof(T));
    std::memcpy(diff_bytes + i * sizeof(T), &diff, sizeof(T));
  }
}

// FP16 / BF16: compute in float, round back.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void AddSub16(const uint8_t* a_bytes, const uint8_t* b_bytes, uint8_t* sum_bytes,
              uint8_t* diff_bytes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint16_t a, b;
    std::memcpy(&a, a_bytes + 2 * i, 2);
    std::memcpy(&b, b_bytes + 2 * i, 2);
    const uint16_t sum = FromFloat(ToFloat(a) + ToFloat(b));
    const uint16_t diff = FromFloat(ToFloat(a) - ToFloat(b));
    std::memcpy(sum_bytes + 2 * i, &sum, 2);
    std::memcpy(diff_bytes + 2 * i, &diff, 2);
  }
}

using Kernel = void (*)(const uint8_t*, const uint8_t*, uint8_t*, uint8_t*, size_t);

Kernel KernelFor(DataType type) {
  switch (type) {
    case DataType::kUint8: return AddSubTyped<uint8_t>;
    case DataType::kUint16: return AddSubTyped<uint16_t>;
    case DataType::kUint32: return AddSubTyped<uint32_t>;
    case DataType::kUint64: return AddSubTyped<uint64_t>;
    case DataType::kInt8: return AddSubTyped<int8_t>;
    case DataType::kInt16: return AddSubTyped<int16_t>;
    case DataType::kInt32: return AddSubTyped<int32_t>;
    case DataType::kInt64: return AddSubTyped<int64_t>;
    case DataType::kFp32: return AddSubTyped<float>;
    case DataType::kFp64: return AddSubTyped<double>;
    case DataType::kFp16: return AddSub16<HalfToFloat, FloatToHalf>;
    case DataType::kBf16: return AddSub16<Bf16ToFloat, FloatToBf16>;
    default: return nullptr;
  }
}

class AddSubInstance : public ModelInstance {
 public:
  AddSubInstance(const inference::ModelConfig& config, Kernel kernel)
      : sum_name_(config.output(0).name()), diff_name_(config.output(1).name()), kernel_(kernel) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    if (inputs.size() != 2) {
      return absl::InvalidArgumentError(StrCat("add_sub needs 2 inputs, got ", inputs.size()));
    }
    const Tensor& a = inputs[0];
    const Tensor& b = inputs[1];
    if (a.shape != b.shape || a.dtype != b.dtype) {
      return absl::InvalidArgumentError(
          StrCat("add_sub inputs must match: '", a.name, "' is ", DataTypeName(a.dtype),
                 ShapeToString(a.shape), ", '", b.name, "' is ", DataTypeName(b.dtype),
                 ShapeToString(b.shape)));
    }
    const size_t bytes = a.data.size();
    const DataType dtype = a.dtype;
    uint8_t* sum_data;
    uint8_t* diff_data;
    Buffer sum = Buffer::Allocate(bytes, &sum_data);
    Buffer diff = Buffer::Allocate(bytes, &diff_data);
    kernel_(a.data.data(), b.data.data(), sum_data, diff_data, bytes / DataTypeByteSize(dtype));
    // The outputs take the inputs' places (the vector and the shapes are reused: both
    // outputs have the inputs' shape). The input bytes are released here.
    inputs[0].name = sum_name_;
    inputs[0].data = std::move(sum);
    inputs[1].name = diff_name_;
    inputs[1].data = std::move(diff);
    return inputs;
  }

 private:
  std::string sum_name_;
  std::string diff_name_;
  Kernel kernel_;
};

class AddSubModel : public LoadedModel {
 public:
  AddSubModel(const inference::ModelConfig& config, Kernel kernel)
      : config_(config), kernel_(kernel) {}
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<AddSubInstance>(config_, kernel_);
  }

 private:
  const inference::ModelConfig& config_;
  Kernel kernel_;
};

class AddSubBackend : public Backend {
 public:
  std::string_view name() const override { return "add_sub"; }
  bool RunsInline() const override { return true; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    if (config.input_size() != 2 || config.output_size() != 2) {
      return absl::InvalidArgumentError(StrCat(
          "add_sub: needs exactly 2 inputs and 2 outputs; config has ", config.input_size(),
          " inputs and ", config.output_size(), " outputs"));
    }
    const auto type = config.input(0).data_type();
    if (KernelFor(FromConfigDataType(type)) == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("add_sub: input[0].data_type ", inference::DataType_Name(type),
                 " is not numeric (BOOL and TYPE_STRING cannot be added)"));
    }
    auto same_dims = [](const auto& x, const auto& y) {
      return std::equal(x.begin(), x.end(), y.begin(), y.end());
    };
    for (int i = 0; i < 2; ++i) {
      if (config.input(i).data_type() != type || config.output(i).data_type() != type) {
        return absl::InvalidArgumentError(
            "add_sub: every input and output must have the same data_type");
      }
      if (!same_dims(config.input(i).dims(), config.input(0).dims()) ||
          !same_dims(config.output(i).dims(), config.input(0).dims())) {
        return absl::InvalidArgumentError(
            "add_sub: every input and output must have the same dims");
      }
      if (config.input(i).optional()) {
        return absl::InvalidArgumentError("add_sub: inputs cannot be optional");
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    return std::make_unique<AddSubModel>(
        *context.config, KernelFor(FromConfigDataType(context.config->input(0).data_type())));
  }
};

}  // namespace

std::unique_ptr<Backend> CreateAddSubBackend() { return std::make_unique<AddSubBackend>(); }

}  // namespace infera
