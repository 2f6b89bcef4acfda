#include "manager/warmup.h"

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "api/float16.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

template <typename T>
void FillRandomValues(uint8_t* out, int64_t count, std::mt19937& rng) {
  for (int64_t i = 0; i < count; ++i) {
    T value;
    if constexpr (std::is_floating_point_v<T>) {
      value = std::uniform_real_distribution<T>(0, 1)(rng);
    } else {
      value = static_cast<T>(rng() % 16);
    }
    std::memcpy(out + i * sizeof(T), &value, sizeof(T));
  }
}

void FillRandom(DataType dtype, uint8_t* out, int64_t count, std::mt19937& rng) {
  switch (dtype) {
    case DataType::kBool:
      for (int64_t i = 0; i < count; ++i) out[i] = rng() & 1;
      break;
    case DataType::kUint8: FillRandomValues<uint8_t>(out, count, rng); break;
    case DataType::kUint16: FillRandomValues<uint16_t>(out, count, rng); break;
    case DataType::kUint32: FillRandomValues<uint32_t>(out, count, rng); break;
    case DataType::kUint64: FillRandomValues<uint64_t>(out, count, rng); break;
    case DataType::kInt8: FillRandomValues<int8_t>(out, count, rng); break;
    case DataType::kInt16: FillRandomValues<int16_t>(out, count, rng); break;
    case DataType::kInt32: FillRandomValues<int32_t>(out, count, rng); break;
    case DataType::kInt64: FillRandomValues<int64_t>(out, count, rng); break;
    case DataType::kFp32: FillRandomValues<float>(out, count, rng); break;
    case DataType::kFp64: FillRandomValues<double>(out, count, rng); break;
    case DataType::kFp16:
    case DataType::kBf16:
      for (int64_t i = 0; i < count; ++i) {
        const float f = std::uniform_real_distribution<float>(0, 1)(rng);
        const uint16_t h = dtype == DataType::kFp16 ? FloatToHalf(f) : FloatToBf16(f);
        std::memcpy(out + 2 * i, &h, 2);
      }
      break;
    default:
      break;
  }
}

absl::StatusOr<Tensor> BuildInput(const inference::ModelConfig& config,
                                  const inference::ModelWarmup& sample, const std::string& name,
                                  const inference::ModelWarmup::Input& spec,
                                  const std::filesystem::path& model_dir, std::mt19937& rng) {
  Tensor tensor{name, FromConfigDataType(spec.data_type()), {}, {}};
  if (config.max_batch_size() > 0) tensor.shape.push_back(std::max<uint32_t>(1, sample.batch_size()));
  tensor.shape.insert(tensor.shape.end(), spec.dims().begin(), spec.dims().end());
  const int64_t count = ElementCount(tensor.shape).value_or(0);
  if (spec.has_input_data_file()) {
    const std::filesystem::path path = model_dir / "warmup" / spec.input_data_file();
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(StrCat("warmup '", sample.name(), "': cannot read ", path.string()));
    std::ostringstream bytes;
    bytes << in.rdbuf();
    tensor.data = Buffer::FromString(std::move(bytes).str());
  } else if (tensor.dtype == DataType::kBytes) {
    std::string bytes;
    for (int64_t i = 0; i < count; ++i) AppendBytesElement(bytes, "");
    tensor.data = Buffer::FromString(std::move(bytes));
  } else {
    uint8_t* out;
    tensor.data = Buffer::Allocate(count * DataTypeByteSize(tensor.dtype), &out);
    std::memset(out, 0, tensor.data.size());
    if (spec.has_random_data()) FillRandom(tensor.dtype, out, count, rng);
  }
  absl::Status valid = ValidateTensorData(tensor);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(StrCat("warmup '", sample.name(), "': ", valid.message()));
  }
  return tensor;
}

}  // namespace

absl::StatusOr<std::vector<InferRequest>> BuildWarmupRequests(
    const inference::ModelConfig& config, const std::filesystem::path& model_dir) {
  std::vector<InferRequest> requests;
  std::mt19937 rng(0x5eed);
  for (const auto& sample : config.model_warmup()) {
    InferRequest request;
    request.model_name = config.name();
    request.id = StrCat("warmup sample '", sample.name(), "'");
    for (const auto& [name, spec] : sample.inputs()) {
      ASSIGN_OR_RETURN(Tensor input, BuildInput(config, sample, name, spec, model_dir, rng));
      request.inputs.push_back(std::move(input));
    }
    for (uint32_t i = 0; i < std::max<uint32_t>(1, sample.count()); ++i) requests.push_back(request);
  }
  return requests;
}

}  // namespace infera
