#include "manager/output_check.h"

#include "common/status.h"
#include "common/str_cat.h"
#include "manager/request_validator.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

// `out` against config output `spec`; undoes its reshape.
absl::Status CheckOutput(const inference::ModelConfig& config, int index, int64_t rows, Tensor& out) {
  const inference::ModelOutput& spec = config.output(index);
  const size_t lead = rows > 0 ? 1 : 0;
  const auto& expected_dims = spec.has_reshape() ? spec.reshape().shape() : spec.dims();
  bool shape_ok = out.name == spec.name() && out.shape.size() == lead + expected_dims.size() &&
                  (lead == 0 || out.shape[0] == rows);
  for (size_t d = 0; shape_ok && d < static_cast<size_t>(expected_dims.size()); ++d) {
    shape_ok = expected_dims[d] < 0 || out.shape[lead + d] == expected_dims[d];
  }
  if (!shape_ok || out.dtype != FromConfigDataType(spec.data_type())) {
    return absl::InternalError(StrCat("model '", config.name(), "' output ", index, " ('", out.name, "', ",
                                      DataTypeName(out.dtype), " ", ShapeToString(out.shape),
                                      ") does not match its config ('", spec.name(), "', ",
                                      DataTypeName(FromConfigDataType(spec.data_type())), " ",
                                      ShapeToString(ClientShape(config, expected_dims)), ")"));
  }
  if (spec.has_reshape()) {
    Shape rest(out.shape.begin() + lead, out.shape.end());
    ASSIGN_OR_RETURN(Shape dims, ReshapeTo(rest, spec.dims()));
    if (lead) dims.insert(dims.begin(), rows);
    out.shape = std::move(dims);
  }
  return ValidateTensorData(out);
}

}  // namespace

absl::Status CheckOutputs(const inference::ModelConfig& config, int64_t rows, std::vector<Tensor>& outputs) {
  if (outputs.size() != static_cast<size_t>(config.output_size())) {
    return absl::InternalError(StrCat("model '", config.name(), "' produced ", outputs.size(),
                                      " outputs; its config declares ", config.output_size()));
  }
  for (int i = 0; i < config.output_size(); ++i) RETURN_IF_ERROR(CheckOutput(config, i, rows, outputs[i]));
  return absl::OkStatus();
}

absl::Status CheckOutputSubset(const inference::ModelConfig& config, int64_t rows, std::vector<Tensor>& outputs) {
  if (outputs.empty()) {
    return absl::InternalError(StrCat("model '", config.name(), "' sent a response without outputs"));
  }
  std::vector<bool> seen(config.output_size(), false);
  for (Tensor& out : outputs) {
    int index = -1;
    for (int i = 0; i < config.output_size(); ++i) {
      if (config.output(i).name() == out.name) index = i;
    }
    if (index < 0) {
      return absl::InternalError(
          StrCat("model '", config.name(), "' sent output '", out.name, "', which its config does not declare"));
    }
    if (seen[index]) {
      return absl::InternalError(StrCat("model '", config.name(), "' sent output '", out.name, "' twice"));
    }
    seen[index] = true;
    RETURN_IF_ERROR(CheckOutput(config, index, rows, out));
  }
  return absl::OkStatus();
}

std::vector<Tensor> SelectOutputs(std::vector<Tensor> outputs, const std::vector<RequestedOutput>& requested) {
  if (requested.empty()) return outputs;
  std::vector<Tensor> selected;
  selected.reserve(requested.size());
  for (const RequestedOutput& r : requested) {
    for (Tensor& t : outputs) {
      if (t.name == r.name) selected.push_back(std::move(t));
    }
  }
  return selected;
}

}  // namespace infera
