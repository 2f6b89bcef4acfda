#include "backend/torch/torch_options.h"

#include "repository/model_config_util.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

constexpr std::string_view kIntraOpThreadCount = "INTRA_OP_THREAD_COUNT";
constexpr std::string_view kInferenceMode = "INFERENCE_MODE";
constexpr std::string_view kDisableOptimizedExecution = "DISABLE_OPTIMIZED_EXECUTION";
constexpr std::string_view kOptimizeForInference = "OPTIMIZE_FOR_INFERENCE";
constexpr std::string_view kEnableWeightSharing = "ENABLE_WEIGHT_SHARING";
constexpr std::string_view kPrecision = "PRECISION";
constexpr std::string_view kValidatePrecision = "VALIDATE_PRECISION";
constexpr std::string_view kMinCosine = "PRECISION_MIN_COSINE";
constexpr std::string_view kMinTop1 = "PRECISION_MIN_TOP1_AGREEMENT";
constexpr std::string_view kGraphExecutor = "GRAPH_EXECUTOR";

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> ParseBool(std::string_view text) {
  const std::string value = Lower(text);
  if (value == "true" || value == "1" || value == "yes" || value == "on") return true;
  if (value == "false" || value == "0" || value == "no" || value == "off") return false;
  return std::nullopt;
}

absl::Status BadValue(std::string_view key, std::string_view value, std::string_view expected) {
  return absl::InvalidArgumentError(StrCat("parameters: '", key, "' has value '", value,
                                           "', expected ", expected));
}

absl::Status SetBool(std::string_view key, std::string_view value, bool* out) {
  std::optional<bool> parsed = ParseBool(value);
  if (!parsed) return BadValue(key, value, "true or false");
  *out = *parsed;
  return absl::OkStatus();
}

// More threads than 4 per core only contend (MachineLimits::MaxThreads).
absl::Status SetThreads(std::string_view key, std::string_view value, int max_threads, int* out) {
  int parsed = -1;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc() || end != value.data() + value.size() || parsed < 0 ||
      parsed > max_threads) {
    return BadValue(key, value, StrCat("an integer from 0 to ", max_threads, " (4 per core)"));
  }
  *out = parsed;
  return absl::OkStatus();
}

absl::Status SetPrecision(std::string_view key, std::string_view value, Precision* out) {
  const std::string lower = Lower(value);
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kFp16,
                      Precision::kInt8Dynamic}) {
    if (lower == PrecisionName(p)) {
      *out = p;
      return absl::OkStatus();
    }
  }
  return BadValue(key, value, "one of fp32, bf16, fp16, int8_dynamic");
}

absl::Status SetGraphExecutor(std::string_view key, std::string_view value, GraphExecutor* out) {
  const std::string lower = Lower(value);
  for (GraphExecutor e : {GraphExecutor::kAuto, GraphExecutor::kSimple, GraphExecutor::kProfiling}) {
    if (lower == GraphExecutorName(e)) {
      *out = e;
      return absl::OkStatus();
    }
  }
  return BadValue(key, value, "one of auto, simple, profiling");
}

// A fraction in [0, 1]; from_chars for double rejects trailing text, so "0.9x" fails.
absl::Status SetFraction(std::string_view key, std::string_view value, double* out) {
  double parsed = -1;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
      !(parsed >= 0.0 && parsed <= 1.0)) {
    return BadValue(key, value, "a number from 0 to 1");
  }
  *out = parsed;
  return absl::OkStatus();
}

absl::Status CheckModelFilename(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("default_model_filename: '", name,
                                             "' must be a file name inside the version "
                                             "folder (no '/', not '.' or '..')"));
  }
  return absl::OkStatus();
}

// Why a config datatype cannot be used, or empty when it can.
std::string UnsupportedReason(inference::DataType type) {
  switch (type) {
    case inference::TYPE_UINT16:
    case inference::TYPE_UINT32:
    case inference::TYPE_UINT64:
      return "LibTorch 1.13 has no unsigned integer type wider than 8 bits; use a signed "
             "type (e.g. TYPE_INT32 / TYPE_INT64)";
    case inference::TYPE_STRING:
      return "LibTorch tensors cannot hold strings (TYPE_STRING / BYTES)";
    case inference::TYPE_INVALID:
      return "data_type is not set";
    default:
      break;
  }
  if (FromConfigDataType(type) == DataType::kInvalid) return "unknown data_type";
  return "";
}

template <typename TensorConfig>
absl::Status CheckTensors(const google::protobuf::RepeatedPtrField<TensorConfig>& tensors,
                          std::string_view field) {
  if (tensors.empty()) {
    return absl::InvalidArgumentError(
        StrCat(field, ": the pytorch backend needs at least one ", field));
  }
  for (const TensorConfig& tensor : tensors) {
    const std::string reason = UnsupportedReason(tensor.data_type());
    if (!reason.empty()) {
      return absl::InvalidArgumentError(
          StrCat(field, " '", tensor.name(), "': ", inference::DataType_Name(tensor.data_type()),
                 " is not supported by the pytorch backend: ", reason));
    }
    if (tensor.is_shape_tensor()) {
      return absl::InvalidArgumentError(StrCat(
          field, " '", tensor.name(), "': is_shape_tensor is not supported by the pytorch "
          "backend"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kInt8Dynamic: return "int8_dynamic";
  }
  return "fp32";
}

std::string_view GraphExecutorName(GraphExecutor executor) {
  switch (executor) {
    case GraphExecutor::kAuto: return "auto";
    case GraphExecutor::kSimple: return "simple";
    case GraphExecutor::kProfiling: return "profiling";
  }
  return "auto";
}

absl::StatusOr<TorchModelOptions> ParseTorchModelOptions(const inference::ModelConfig& config,
                                                         const MachineLimits& machine) {
  TorchModelOptions options;
  std::string_view floor_key;  // a floor that was set, if any
  if (!config.default_model_filename().empty()) {
    RETURN_IF_ERROR(CheckModelFilename(config.default_model_filename()));
    options.model_filename = config.default_model_filename();
  }
  for (const auto& [key, parameter] : config.parameters()) {
    const std::string& value = parameter.string_value();
    if (key == kIntraOpThreadCount) {
      RETURN_IF_ERROR(SetThreads(key, value, machine.MaxThreads(), &options.intra_op_threads));
    } else if (key == kInferenceMode) {
      RETURN_IF_ERROR(SetBool(key, value, &options.inference_mode));
    } else if (key == kDisableOptimizedExecution) {
      RETURN_IF_ERROR(SetBool(key, value, &options.disable_optimized_execution));
    } else if (key == kOptimizeForInference) {
      RETURN_IF_ERROR(SetBool(key, value, &options.optimize_for_inference));
    } else if (key == kEnableWeightSharing) {
      RETURN_IF_ERROR(SetBool(key, value, &options.share_weights));
    } else if (key == kPrecision) {
      RETURN_IF_ERROR(SetPrecision(key, value, &options.precision));
    } else if (key == kValidatePrecision) {
      RETURN_IF_ERROR(SetBool(key, value, &options.validate_precision));
    } else if (key == kGraphExecutor) {
      RETURN_IF_ERROR(SetGraphExecutor(key, value, &options.graph_executor));
    } else if (key == kMinCosine) {
      RETURN_IF_ERROR(SetFraction(key, value, &options.min_cosine));
      floor_key = kMinCosine;
    } else if (key == kMinTop1) {
      RETURN_IF_ERROR(SetFraction(key, value, &options.min_top1_agreement));
      floor_key = kMinTop1;
    } else {
      options.ignored_keys.push_back(key);
    }
  }
  // A floor is only checked by validation; a floor that would silently do nothing is
  // a config mistake.
  if (!floor_key.empty() && !options.validate_precision) {
    return absl::InvalidArgumentError(StrCat("parameters: '", floor_key, "' is set but '",
                                             kValidatePrecision, "' is not true; the floor "
                                             "is only checked by load-time validation"));
  }
  // protobuf's map iterates in no particular order; sorted keys make logs stable.
  std::sort(options.ignored_keys.begin(), options.ignored_keys.end());
  return options;
}

absl::Status ValidateTorchConfig(const inference::ModelConfig& config, const MachineLimits& machine) {
  RETURN_IF_ERROR(CheckTensors(config.input(), "input"));
  RETURN_IF_ERROR(CheckTensors(config.output(), "output"));
  return ParseTorchModelOptions(config, machine).status();
}

}  // namespace infera
