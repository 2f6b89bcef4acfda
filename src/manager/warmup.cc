#include "manager/warmup.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <vector>

#include "api/float16.h"
#include "common/checked_math.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/confined_path.h"
#include "repository/config_limits.h"
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

namespace fs = std::filesystem;

// The bytes of `name` in <model_dir>/warmup/. The file must resolve, symbolic links
// included, inside that folder and be a regular file of at most kMaxWarmupInputBytes.
// Errors name the file as the config does, never the resolved path, and are the same
// whether or not a path outside the folder exists (no existence oracle).
absl::StatusOr<std::string> ReadWarmupFile(const fs::path& model_dir, const std::string& name) {
  const absl::Status outside = absl::InvalidArgumentError(
      StrCat("input_data_file '", name, "' must name a file inside the model's warmup/ folder"));
  if (EscapesLexically(name)) return outside;
  std::error_code ec;
  if (!fs::is_directory(model_dir / "warmup", ec)) {
    return absl::NotFoundError(StrCat("input_data_file '", name, "': the model has no warmup/ folder"));
  }
  const std::optional<fs::path> path = ResolveInside(model_dir / "warmup", name);
  if (!path) return outside;
  const fs::file_status status = fs::symlink_status(*path, ec);
  if (ec || !fs::is_regular_file(status)) {
    return absl::NotFoundError(
        StrCat("cannot read input_data_file '", name, "' in warmup/ (missing or not a regular file)"));
  }
  const uintmax_t size = fs::file_size(*path, ec);
  if (ec || size > static_cast<uintmax_t>(kMaxWarmupInputBytes)) {
    return absl::InvalidArgumentError(StrCat("input_data_file '", name, "' is larger than the limit of ",
                                             kMaxWarmupInputBytes, " bytes"));
  }
  std::ifstream in(*path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read input_data_file '", name, "' in warmup/"));
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

absl::StatusOr<Tensor> BuildInput(const inference::ModelConfig& config,
                                  const inference::ModelWarmup& sample, const std::string& name,
                                  const inference::ModelWarmup::Input& spec,
                                  const std::filesystem::path& model_dir, std::mt19937& rng) {
  Tensor tensor{name, FromConfigDataType(spec.data_type()), {}, {}};
  if (config.max_batch_size() > 0) tensor.shape.push_back(std::max<uint32_t>(1, sample.batch_size()));
  tensor.shape.insert(tensor.shape.end(), spec.dims().begin(), spec.dims().end());
  // Bounded like ValidateModelConfig does, in case a config reaches here unvalidated.
  const std::optional<int64_t> elements = ElementCount(tensor.shape);
  const std::optional<int64_t> bytes =
      elements ? CheckedMul(*elements, std::max<int64_t>(4, DataTypeByteSize(tensor.dtype))) : std::nullopt;
  if (!bytes || *bytes > kMaxWarmupInputBytes) {
    return absl::InvalidArgumentError(StrCat("warmup '", sample.name(), "': input '", name, "' shape ",
                                             ShapeToString(tensor.shape), " is more than the limit of ",
                                             kMaxWarmupInputBytes, " bytes"));
  }
  const int64_t count = *elements;
  if (spec.has_input_data_file()) {
    absl::StatusOr<std::string> file = ReadWarmupFile(model_dir, spec.input_data_file());
    if (!file.ok()) {
      return absl::Status(file.status().code(), StrCat("warmup '", sample.name(), "': ", file.status().message()));
    }
    tensor.data = Buffer::FromString(std::move(*file));
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
  int64_t total_bytes = 0;
  for (const auto& sample : config.model_warmup()) {
    if (sample.count() > kMaxWarmupCount ||
        requests.size() + std::max<uint32_t>(1, sample.count()) > kMaxWarmupCount) {
      return absl::InvalidArgumentError(StrCat("warmup '", sample.name(), "': count ", sample.count(),
                                               " makes more than the limit of ", kMaxWarmupCount,
                                               " warmup runs"));
    }
    InferRequest request;
    request.model_name = config.name();
    request.id = StrCat("warmup sample '", sample.name(), "'");
    for (const auto& [name, spec] : sample.inputs()) {
      ASSIGN_OR_RETURN(Tensor input, BuildInput(config, sample, name, spec, model_dir, rng));
      total_bytes += static_cast<int64_t>(input.data.size());
      if (total_bytes > kMaxWarmupTotalBytes) {
        return absl::InvalidArgumentError(StrCat("warmup '", sample.name(), "': the samples hold more than the limit of ",
                                                 kMaxWarmupTotalBytes, " bytes in all"));
      }
      request.inputs.push_back(std::move(input));
    }
    for (uint32_t i = 0; i < std::max<uint32_t>(1, sample.count()); ++i) requests.push_back(request);
  }
  return requests;
}

}  // namespace infera
