#include "backend/processing/postprocess_parameters.h"

#include <charconv>
#include <cmath>

#include "api/tensor.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera::processing {

absl::StatusOr<bool> BoolParameter(const inference::ModelConfig& config, std::string_view backend,
                                   std::string_view key, bool fallback) {
  std::optional<std::string> text = ConfigParameter(config, key);
  if (!text) return fallback;
  if (*text == "true") return true;
  if (*text == "false") return false;
  return absl::InvalidArgumentError(
      StrCat(backend, ": parameters[", key, "] '", *text, "' must be \"true\" or \"false\""));
}

absl::StatusOr<double> NumberParameter(const inference::ModelConfig& config,
                                       std::string_view backend, std::string_view key,
                                       double fallback, double min, double max) {
  std::optional<std::string> text = ConfigParameter(config, key);
  if (!text) return fallback;
  double value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value) || value < min || value > max) {
    return absl::InvalidArgumentError(StrCat(backend, ": parameters[", key, "] '", *text,
                                             "' is not a number in [", min, ", ", max, "]"));
  }
  return value;
}

absl::StatusOr<std::optional<int64_t>> IntegerParameter(const inference::ModelConfig& config,
                                                        std::string_view backend,
                                                        std::string_view key, int64_t min,
                                                        int64_t max) {
  std::optional<std::string> text = ConfigParameter(config, key);
  if (!text) return std::optional<int64_t>();
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < min || value > max) {
    return absl::InvalidArgumentError(StrCat(backend, ": parameters[", key, "] '", *text,
                                             "' is not an integer in [", min, ", ", max, "]"));
  }
  return std::optional<int64_t>(value);
}

absl::StatusOr<std::string> ChoiceParameter(const inference::ModelConfig& config,
                                            std::string_view backend, std::string_view key,
                                            const std::vector<std::string_view>& allowed) {
  std::optional<std::string> text = ConfigParameter(config, key);
  if (!text) return std::string(allowed[0]);
  for (std::string_view choice : allowed) {
    if (*text == choice) return *text;
  }
  return absl::InvalidArgumentError(StrCat(backend, ": parameters[", key, "] '", *text,
                                           "' must be one of ", StrJoin(allowed, ", ")));
}

absl::StatusOr<std::vector<int>> IndexOutputs(const inference::ModelConfig& config,
                                              std::string_view backend,
                                              const std::vector<std::string_view>& known) {
  std::vector<int> index(known.size(), -1);
  if (config.output_size() == 0) {
    return absl::InvalidArgumentError(
        StrCat(backend, ": declares no output (known: ", StrJoin(known, ", "), ")"));
  }
  for (int i = 0; i < config.output_size(); ++i) {
    const std::string& name = config.output(i).name();
    size_t k = 0;
    while (k < known.size() && known[k] != name) ++k;
    if (k == known.size()) {
      return absl::InvalidArgumentError(
          StrCat(backend, ": output '", name,
                 "' is not one it produces (known: ", StrJoin(known, ", "), ")"));
    }
    if (index[k] >= 0) {
      return absl::InvalidArgumentError(StrCat(backend, ": output '", name, "' declared twice"));
    }
    index[k] = i;
  }
  return index;
}

absl::Status CheckTensor(std::string_view backend, std::string_view kind, std::string_view name,
                         inference::DataType type,
                         const google::protobuf::RepeatedField<int64_t>& dims,
                         const std::vector<inference::DataType>& allowed_types,
                         const std::vector<int64_t>& expected_dims) {
  bool type_ok = allowed_types.empty();
  std::vector<std::string> type_names;
  for (inference::DataType allowed : allowed_types) {
    type_ok = type_ok || allowed == type;
    type_names.push_back(inference::DataType_Name(allowed));
  }
  if (!type_ok) {
    return absl::InvalidArgumentError(StrCat(backend, ": ", kind, " '", name, "' is ",
                                             inference::DataType_Name(type), "; must be ",
                                             StrJoin(type_names, " or ")));
  }
  bool dims_ok = dims.size() == static_cast<int>(expected_dims.size());
  for (int i = 0; dims_ok && i < dims.size(); ++i) {
    const int64_t want = expected_dims[i];
    if (want >= 0) {
      dims_ok = dims[i] == want;
    } else if (want == -1) {
      dims_ok = dims[i] >= 1;
    } else {
      dims_ok = dims[i] >= 1 || dims[i] == -1;
    }
  }
  if (!dims_ok) {
    std::vector<std::string> want;
    for (int64_t d : expected_dims) {
      want.push_back(d >= 0 ? StrCat(d) : d == -1 ? std::string("n") : std::string("n|-1"));
    }
    return absl::InvalidArgumentError(
        StrCat(backend, ": ", kind, " '", name, "' has dims ",
               ShapeToString(Shape(dims.begin(), dims.end())), "; must be [", StrJoin(want, ","),
               "] (n: a fixed size >= 1; the batch dimension is not part of dims)"));
  }
  return absl::OkStatus();
}

}  // namespace infera::processing
