#include "manager/request_validator.h"

#include <algorithm>

#include "common/checked_math.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "manager/classification.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

absl::Status InputError(std::string_view model, std::string_view input, std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat("model '", model, "': input '", input, "': ", what));
}

// Checks one input's datatype and shape against its config; returns its batch size
// (0 when the model does not batch).
absl::StatusOr<int64_t> CheckInput(const inference::ModelConfig& config,
                                   const inference::ModelInput& spec, const Tensor& tensor) {
  const DataType expected = FromConfigDataType(spec.data_type());
  if (tensor.dtype != expected) {
    return InputError(config.name(), tensor.name,
                      StrCat("datatype ", DataTypeName(tensor.dtype),
                             " does not match the model's ", DataTypeName(expected)));
  }
  const bool batching = config.max_batch_size() > 0;
  const size_t lead = batching ? 1 : 0;
  const size_t rank = static_cast<size_t>(spec.dims_size()) + lead;
  // The client's view of the config's shape (-1 first when batching), built only for
  // an error message.
  auto client_shape = [&] { return ShapeToString(ClientShape(config, spec.dims())); };
  if (tensor.shape.size() != rank) {
    return InputError(config.name(), tensor.name,
                      StrCat("shape ", ShapeToString(tensor.shape), " has rank ",
                             tensor.shape.size(), " but the model expects ", client_shape(),
                             batching ? " (the first dimension is the batch)" : ""));
  }
  for (size_t i = 0; i < rank; ++i) {
    const int64_t expected = i < lead ? -1 : spec.dims(static_cast<int>(i - lead));
    if (tensor.shape[i] < 0 || (expected >= 0 && tensor.shape[i] != expected)) {
      return InputError(config.name(), tensor.name,
                        StrCat("shape ", ShapeToString(tensor.shape),
                               " does not match the model's ", client_shape(),
                               " at dimension ", i));
    }
  }
  int64_t batch_size = 0;
  if (batching) {
    batch_size = tensor.shape[0];
    if (batch_size < 1 || batch_size > config.max_batch_size()) {
      return InputError(config.name(), tensor.name,
                        StrCat("batch size ", batch_size, " is outside [1, max_batch_size=",
                               config.max_batch_size(), "]"));
    }
  }
  absl::Status data = ValidateTensorData(tensor);
  if (!data.ok()) return absl::InvalidArgumentError(StrCat("model '", config.name(), "': ", data.message()));
  return batch_size;
}

absl::Status CheckRequestedOutputs(const inference::ModelConfig& config,
                                   const InferRequest& request) {
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    const std::string& name = request.outputs[i].name;
    if (FindConfigOutput(config, name) == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("model '", config.name(), "' has no output '", name, "'"));
    }
    RETURN_IF_ERROR(CheckRequestedOutputParameters(config, request.outputs[i]).status());
    for (size_t j = 0; j < i; ++j) {
      if (request.outputs[j].name == name) {
        return absl::InvalidArgumentError(
            StrCat("output '", name, "' already exists in request"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> ReshapeTo(const Shape& shape,
                                const google::protobuf::RepeatedField<int64_t>& target) {
  const int64_t total = ElementCount(shape).value_or(-1);
  int64_t known = 1;
  int variable_index = -1;
  for (int i = 0; i < target.size(); ++i) {
    if (target[i] < 0) {
      variable_index = i;
    } else if (std::optional<int64_t> product = CheckedMul(known, target[i])) {
      known = *product;
    } else {
      return absl::InvalidArgumentError(StrCat("cannot reshape ", ShapeToString(shape), " to [",
                                               StrJoin(target, ","), "]: too many elements"));
    }
  }
  Shape result(target.begin(), target.end());
  if (variable_index >= 0) {
    if (known == 0 || total % known != 0) {
      return absl::InvalidArgumentError(StrCat("cannot reshape ", ShapeToString(shape), " to [",
                                               StrJoin(target, ","), "]"));
    }
    result[variable_index] = total / known;
  } else if (known != total) {
    return absl::InvalidArgumentError(StrCat("cannot reshape ", ShapeToString(shape), " to [",
                                             StrJoin(target, ","), "]"));
  }
  return result;
}

absl::StatusOr<int64_t> PrepareRequest(const inference::ModelConfig& config,
                                       InferRequest& request) {
  if (request.inputs.empty()) {
    return absl::InvalidArgumentError(StrCat("model '", config.name(), "': request has no inputs"));
  }
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const std::string& name = request.inputs[i].name;
    if (FindConfigInput(config, name) == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("model '", config.name(), "' has no input '", name, "'"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (request.inputs[j].name == name) {
        return absl::InvalidArgumentError(StrCat("input '", name, "' already exists in request"));
      }
    }
  }
  // Every input is now known to the config and named once, so config order is a
  // permutation of the request's: inputs are moved into place by swaps (no new vector).
  size_t placed = 0;
  int64_t batch_size = -1;
  for (const auto& spec : config.input()) {
    auto it = std::find_if(request.inputs.begin() + static_cast<std::ptrdiff_t>(placed), request.inputs.end(),
                           [&](const Tensor& t) { return t.name == spec.name(); });
    if (it == request.inputs.end()) {
      if (spec.optional()) continue;
      return absl::InvalidArgumentError(
          StrCat("model '", config.name(), "': missing input '", spec.name(), "'"));
    }
    ASSIGN_OR_RETURN(int64_t rows, CheckInput(config, spec, *it));
    if (batch_size >= 0 && rows != batch_size) {
      return InputError(config.name(), it->name,
                        StrCat("batch size ", rows, " differs from the other inputs' ", batch_size));
    }
    batch_size = rows;
    if (spec.has_reshape()) {
      // The batch dimension stays; the rest takes the backend's shape.
      Shape rest(it->shape.begin() + (config.max_batch_size() > 0 ? 1 : 0), it->shape.end());
      ASSIGN_OR_RETURN(Shape reshaped, ReshapeTo(rest, spec.reshape().shape()));
      if (config.max_batch_size() > 0) reshaped.insert(reshaped.begin(), it->shape[0]);
      it->shape = std::move(reshaped);
    }
    std::iter_swap(request.inputs.begin() + static_cast<std::ptrdiff_t>(placed), it);
    ++placed;
  }
  RETURN_IF_ERROR(CheckRequestedOutputs(config, request));
  return batch_size > 0 ? batch_size : 1;
}

}  // namespace infera
