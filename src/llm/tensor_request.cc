#include "llm/tensor_request.h"

#include <optional>
#include <string_view>

#include "common/status.h"
#include "common/str_cat.h"
#include "api/sampling_params_json.h"
#include "llm/text_imports.h"

namespace infera::llm {
namespace {

// A BOOL flag's first element; nullopt when the tensor holds none.
absl::StatusOr<std::optional<bool>> Flag(const Tensor& t) {
  if (t.dtype != DataType::kBool) {
    return absl::InvalidArgumentError(StrCat("input '", t.name, "' must be BOOL"));
  }
  if (t.data.empty()) return std::optional<bool>();
  return std::optional<bool>(t.data.data()[0] != 0);
}

absl::Status ParseSampling(const Tensor& t, SamplingParams& sampling) {
  if (t.dtype != DataType::kBytes) return absl::InvalidArgumentError("input 'sampling_parameters' must be BYTES");
  ASSIGN_OR_RETURN(std::vector<std::string_view> elements, SplitBytesElements(t.data.AsStringView()));
  if (elements.empty() || elements[0].empty()) return absl::OkStatus();
  rapidjson::Document doc;
  RETURN_IF_ERROR(ParseJson(elements[0], "sampling_parameters", doc));
  if (!doc.IsObject()) return absl::InvalidArgumentError("sampling_parameters must be a JSON object");
  return ParseSamplingFields(doc, sampling, nullptr);
}

}  // namespace

absl::StatusOr<TensorGenerationRequest> ParseTensorGenerationRequest(const std::vector<Tensor>& inputs,
                                                                     int64_t batch_rows) {
  TensorGenerationRequest request;
  const Tensor* text = nullptr;
  std::optional<bool> exclude_input;
  for (const Tensor& t : inputs) {
    if (t.name == "text_input") {
      text = &t;
    } else if (t.name == "sampling_parameters") {
      RETURN_IF_ERROR(ParseSampling(t, request.sampling));
    } else if (t.name == "exclude_input_in_output") {
      ASSIGN_OR_RETURN(exclude_input, Flag(t));
    } else if (t.name == "stream") {
      ASSIGN_OR_RETURN(std::optional<bool> stream, Flag(t));
      request.stream = stream.value_or(false);
    }
  }
  if (text == nullptr) return absl::InvalidArgumentError("input 'text_input' is required");
  if (text->dtype != DataType::kBytes) return absl::InvalidArgumentError("input 'text_input' must be BYTES");
  ASSIGN_OR_RETURN(std::vector<std::string_view> prompts, SplitBytesElements(text->data.AsStringView()));
  if (prompts.empty()) return absl::InvalidArgumentError("input 'text_input' holds no prompt");
  if (batch_rows > 0 && static_cast<int64_t>(prompts.size()) != batch_rows) {
    return absl::InvalidArgumentError(StrCat("input 'text_input' holds ", prompts.size(), " prompts in ", batch_rows,
                                             " batch rows; send one prompt per row (shape [N, 1])"));
  }
  if (request.stream && prompts.size() > 1) {
    return absl::InvalidArgumentError(StrCat("input 'text_input' holds ", prompts.size(),
                                             " prompts, but stream=true streams one generation per request; "
                                             "send one request per prompt"));
  }
  if (request.stream && exclude_input == false) {
    return absl::InvalidArgumentError(
        "exclude_input_in_output=false is not allowed with stream=true (the prompt is not streamed back)");
  }
  request.exclude_input = exclude_input.value_or(request.stream);
  request.prompts.assign(prompts.begin(), prompts.end());
  return request;
}

}  // namespace infera::llm
