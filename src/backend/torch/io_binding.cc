#include "backend/torch/io_binding.h"

#include <charconv>

#include "common/str_cat.h"

namespace infera {
namespace {

template <typename TensorConfig>
bool AllIndexed(const google::protobuf::RepeatedPtrField<TensorConfig>& tensors) {
  for (const TensorConfig& tensor : tensors) {
    if (!IndexSuffix(tensor.name())) return false;
  }
  return !tensors.empty();
}

// Positions by `__<index>` suffix; names the input whose index clashes or is too large.
absl::StatusOr<std::vector<int>> PositionsByIndex(const inference::ModelConfig& config,
                                                  const std::vector<ForwardArgument>& arguments) {
  std::vector<int> positions;
  std::vector<int> owner(arguments.size(), -1);
  for (int i = 0; i < config.input_size(); ++i) {
    const std::string& name = config.input(i).name();
    const int index = *IndexSuffix(name);
    if (index >= static_cast<int>(arguments.size())) {
      return absl::InvalidArgumentError(StrCat(
          "input '", name, "': index ", index, " is past forward()'s last argument; forward",
          DescribeArguments(arguments), " takes ", arguments.size()));
    }
    if (owner[index] >= 0) {
      return absl::InvalidArgumentError(StrCat("input '", name, "' and input '",
                                               config.input(owner[index]).name(),
                                               "' both map to forward() argument ", index));
    }
    owner[index] = i;
    positions.push_back(index);
  }
  return positions;
}

// Positions by argument name; names the input that matches no argument.
absl::StatusOr<std::vector<int>> PositionsByName(const inference::ModelConfig& config,
                                                 const std::vector<ForwardArgument>& arguments) {
  std::vector<int> positions;
  for (const inference::ModelInput& input : config.input()) {
    int found = -1;
    for (size_t a = 0; a < arguments.size(); ++a) {
      if (arguments[a].name == input.name()) found = static_cast<int>(a);
    }
    if (found < 0) {
      return absl::InvalidArgumentError(StrCat(
          "input '", input.name(), "' matches no argument of forward",
          DescribeArguments(arguments), ", and not every input is named <name>__<index> "
          "(which would bind by position)"));
    }
    positions.push_back(found);
  }
  return positions;
}

}  // namespace

std::optional<int> IndexSuffix(std::string_view name) {
  const size_t sep = name.rfind("__");
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view digits = name.substr(sep + 2);
  if (digits.empty() || digits.size() > 6) return std::nullopt;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return index;
}

std::string DescribeArguments(const std::vector<ForwardArgument>& arguments) {
  std::vector<std::string> names;
  for (const ForwardArgument& argument : arguments) names.push_back(argument.name);
  return StrCat("(", StrJoin(names, ", "), ")");
}

absl::StatusOr<InputBinding> BindInputs(const inference::ModelConfig& config,
                                        const std::vector<ForwardArgument>& arguments) {
  InputBinding binding;
  binding.by_index = AllIndexed(config.input());
  absl::StatusOr<std::vector<int>> positions = binding.by_index
                                                   ? PositionsByIndex(config, arguments)
                                                   : PositionsByName(config, arguments);
  if (!positions.ok()) return positions.status();
  binding.position = *std::move(positions);

  std::vector<bool> fed(arguments.size(), false);
  for (size_t i = 0; i < binding.position.size(); ++i) {
    const ForwardArgument& argument = arguments[binding.position[i]];
    if (!argument.accepts_tensor) {
      return absl::InvalidArgumentError(StrCat("input '", config.input(i).name(),
                                               "' feeds forward() argument '", argument.name,
                                               "', which does not take a Tensor"));
    }
    if (fed[binding.position[i]]) {
      return absl::InvalidArgumentError(StrCat("input '", config.input(i).name(),
                                               "': forward() argument '", argument.name,
                                               "' is fed by two inputs"));
    }
    fed[binding.position[i]] = true;
  }
  for (size_t a = 0; a < arguments.size(); ++a) {
    if (!fed[a] && !arguments[a].has_default) {
      return absl::InvalidArgumentError(StrCat(
          "forward() argument '", arguments[a].name, "' (position ", a,
          ") is fed by no config input and has no default"));
    }
  }
  return binding;
}

absl::StatusOr<OutputBinding> BindOutputs(const inference::ModelConfig& config) {
  OutputBinding binding;
  binding.by_index = AllIndexed(config.output());
  for (int i = 0; i < config.output_size(); ++i) {
    const int index = binding.by_index ? *IndexSuffix(config.output(i).name()) : i;
    for (int j = 0; j < i; ++j) {
      if (binding.index[j] == index) {
        return absl::InvalidArgumentError(StrCat("output '", config.output(i).name(),
                                                 "' and output '", config.output(j).name(),
                                                 "' both map to returned value ", index));
      }
    }
    binding.index.push_back(index);
  }
  return binding;
}

absl::Status CheckReturnedCount(const OutputBinding& binding,
                                const inference::ModelConfig& config, size_t returned) {
  for (size_t i = 0; i < binding.index.size(); ++i) {
    if (static_cast<size_t>(binding.index[i]) >= returned) {
      return absl::InternalError(StrCat(
          "output '", config.output(static_cast<int>(i)).name(), "': the model returned ",
          returned, " value(s), none at index ", binding.index[i]));
    }
  }
  if (!binding.by_index && returned != binding.index.size()) {
    std::vector<std::string> names;
    for (const inference::ModelOutput& output : config.output()) names.push_back(output.name());
    return absl::InternalError(StrCat("the model returned ", returned,
                                      " values but the config declares ", names.size(),
                                      " outputs (", StrJoin(names, ", "), ")"));
  }
  return absl::OkStatus();
}

}  // namespace infera
