#include "codec/output_encoding.h"

#include "api/parameters.h"

namespace infera {

OutputEncoding OutputEncoding::FromRequest(const InferRequest& request) {
  OutputEncoding encoding;
  encoding.binary_by_default =
      GetBoolParameter(request.parameters, "binary_data_output").value_or(false);
  for (const RequestedOutput& output : request.outputs) {
    if (std::optional<bool> binary = GetBoolParameter(output.parameters, "binary_data")) {
      encoding.overrides.emplace_back(output.name, *binary);
    }
  }
  return encoding;
}

bool OutputEncoding::IsBinary(std::string_view name) const {
  // A handful of outputs at most: a linear scan beats hashing.
  for (const auto& [output_name, binary] : overrides) {
    if (output_name == name) return binary;
  }
  return binary_by_default;
}

}  // namespace infera
