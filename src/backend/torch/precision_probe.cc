#include "backend/torch/precision_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "api/float16.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

constexpr uint32_t kSeed = 20261201;
constexpr int64_t kVariableDim = 8;
constexpr int kMaxBatch = 8;

// A CHW image: 3 (or 1) channels first.
bool ImageLike(const Shape& dims) { return dims.size() == 3 && (dims[0] == 3 || dims[0] == 1); }

// Smooth seeded "photos": three low-frequency sinusoids per channel, 10 % noise, then
// ImageNet normalisation, so values look like a preprocessed image, not white noise.
void FillImage(const Shape& dims, int64_t count, std::mt19937& rng, float* out) {
  static constexpr float kMean[3] = {0.485f, 0.456f, 0.406f};
  static constexpr float kStd[3] = {0.229f, 0.224f, 0.225f};
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  const int64_t channels = dims[0], height = dims[1], width = dims[2];
  float* p = out;
  for (int64_t n = 0; n < count; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      float fx[3], fy[3], phase[3];
      for (int k = 0; k < 3; ++k) {
        fx[k] = 0.5f + 6.f * unit(rng);
        fy[k] = 0.5f + 6.f * unit(rng);
        phase[k] = 6.2831853f * unit(rng);
      }
      for (int64_t y = 0; y < height; ++y) {
        for (int64_t x = 0; x < width; ++x) {
          float v = 0;
          for (int k = 0; k < 3; ++k) {
            v += std::sin(fx[k] * 6.2831853f * x / width + fy[k] * 6.2831853f * y / height +
                          phase[k]);
          }
          const float pixel = std::clamp(0.5f + v / 6.f + 0.1f * (unit(rng) - 0.5f), 0.f, 1.f);
          *p++ = (pixel - kMean[c % 3]) / kStd[c % 3];
        }
      }
    }
  }
}

Tensor MakeInput(const inference::ModelInput& input, int64_t batch, bool batched, int64_t id_bound,
                 std::mt19937& rng) {
  Shape dims(input.dims().begin(), input.dims().end());
  if (input.has_reshape()) dims.assign(input.reshape().shape().begin(), input.reshape().shape().end());
  for (int64_t& d : dims) {
    if (d < 0) d = kVariableDim;
  }
  Shape shape = dims;
  if (batched) shape.insert(shape.begin(), batch);
  const DataType type = FromConfigDataType(input.data_type());
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  const size_t element = DataTypeByteSize(type);
  uint8_t* bytes = nullptr;
  Buffer buffer = Buffer::Allocate(static_cast<size_t>(count) * element, &bytes);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> floats(static_cast<size_t>(count));
  if (type == DataType::kFp32 || type == DataType::kFp64 || type == DataType::kFp16 ||
      type == DataType::kBf16) {
    if (ImageLike(dims)) {
      FillImage(dims, batched ? batch : 1, rng, floats.data());
    } else {
      for (float& f : floats) f = normal(rng);
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    uint8_t* at = bytes + i * element;
    const float f = floats[i];
    switch (type) {
      case DataType::kFp32: std::memcpy(at, &f, 4); break;
      case DataType::kFp64: { const double d = f; std::memcpy(at, &d, 8); break; }
      case DataType::kFp16: { const uint16_t h = FloatToHalf(f); std::memcpy(at, &h, 2); break; }
      case DataType::kBf16: { const uint16_t h = FloatToBf16(f); std::memcpy(at, &h, 2); break; }
      case DataType::kBool: *at = static_cast<uint8_t>(rng() & 1); break;
      default: {  // integers: ids in [0, bound) within the type's range
        const int64_t type_max = element == 1 ? 127 : element == 2 ? 32767 : INT64_C(1) << 30;
        const int64_t bound = std::max<int64_t>(1, std::min(id_bound, type_max));
        const int64_t id = static_cast<int64_t>(rng() % static_cast<uint64_t>(bound));
        std::memcpy(at, &id, element);  // little-endian: the low bytes carry the value
        break;
      }
    }
  }
  return Tensor{input.name(), type, std::move(shape), std::move(buffer)};
}

// The tensor's values as floats, or empty when it is not a floating type.
std::vector<float> AsFloats(const Tensor& tensor) {
  const size_t element = DataTypeByteSize(tensor.dtype);
  if (element == 0) return {};
  const size_t count = tensor.data.size() / element;
  std::vector<float> out(count);
  const uint8_t* p = tensor.data.data();
  for (size_t i = 0; i < count; ++i) {
    switch (tensor.dtype) {
      case DataType::kFp32: std::memcpy(&out[i], p + 4 * i, 4); break;
      case DataType::kFp64: { double d; std::memcpy(&d, p + 8 * i, 8); out[i] = static_cast<float>(d); break; }
      case DataType::kFp16: { uint16_t h; std::memcpy(&h, p + 2 * i, 2); out[i] = HalfToFloat(h); break; }
      case DataType::kBf16: { uint16_t h; std::memcpy(&h, p + 2 * i, 2); out[i] = Bf16ToFloat(h); break; }
      default: return {};
    }
  }
  return out;
}

absl::Status Prefix(const absl::Status& status, std::string_view what) {
  return absl::Status(status.code(), StrCat(what, ": ", status.message()));
}

template <typename Fn>
absl::StatusOr<double> MedianMs(Fn&& run, int runs, int budget_ms) {
  RETURN_IF_ERROR(run());  // untimed: first-call graph specialisation
  std::vector<double> times;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(run());
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (t1 - start > std::chrono::milliseconds(budget_ms)) break;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

std::vector<std::vector<Tensor>> ValidationBatches(const inference::ModelConfig& config,
                                                   int64_t id_bound, int num_samples) {
  std::mt19937 rng(kSeed);
  const bool batched = config.max_batch_size() > 0;
  const int64_t per_batch = batched ? std::min(config.max_batch_size(), kMaxBatch) : 1;
  std::vector<std::vector<Tensor>> batches;
  for (int64_t done = 0; done < num_samples; done += per_batch) {
    const int64_t batch = std::min<int64_t>(per_batch, num_samples - done);
    std::vector<Tensor> inputs;
    for (const inference::ModelInput& input : config.input()) {
      inputs.push_back(MakeInput(input, batch, batched, id_bound, rng));
    }
    batches.push_back(std::move(inputs));
  }
  return batches;
}

absl::StatusOr<PrecisionFigures> ComparePrecision(const std::vector<std::vector<Tensor>>& batches,
                                                  ModelInstance& fp32, ModelInstance& reduced) {
  PrecisionComparison comparison;
  for (const std::vector<Tensor>& batch : batches) {
    absl::StatusOr<std::vector<Tensor>> want = fp32.Execute(batch);
    if (!want.ok()) return Prefix(want.status(), "validation, fp32 run");
    absl::StatusOr<std::vector<Tensor>> got = reduced.Execute(batch);
    if (!got.ok()) return Prefix(got.status(), "validation, reduced-precision run");
    for (size_t o = 0; o < want->size() && o < got->size(); ++o) {
      const std::vector<float> a = AsFloats((*want)[o]);
      const std::vector<float> b = AsFloats((*got)[o]);
      if (a.empty() || a.size() != b.size()) continue;
      const Shape& shape = (*want)[o].shape;
      // Rows are samples: the batch dimension, or the first dim of an unbatched output.
      const int64_t rows = shape.empty() ? 1 : shape[0];
      const int64_t cols = static_cast<int64_t>(a.size()) / std::max<int64_t>(1, rows);
      const bool classifier = shape.size() == 2 && shape[1] >= 2;
      comparison.Add(a.data(), b.data(), rows, cols, classifier);
    }
  }
  return comparison.figures();
}

absl::StatusOr<double> MeasureSpeedup(const std::vector<Tensor>& sample, ModelInstance& fp32,
                                      ModelInstance& reduced, int runs, int budget_ms) {
  auto run_on = [&](ModelInstance& instance) {
    return [&instance, &sample]() -> absl::Status { return instance.Execute(sample).status(); };
  };
  ASSIGN_OR_RETURN(double fp32_ms, MedianMs(run_on(fp32), runs, budget_ms));
  ASSIGN_OR_RETURN(double reduced_ms, MedianMs(run_on(reduced), runs, budget_ms));
  return reduced_ms > 0 ? fp32_ms / reduced_ms : 1.0;
}

}  // namespace infera
