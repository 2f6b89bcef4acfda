#include "codec/request_decoder_raw.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "api/tensor.h"
#include "common/checked_math.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

absl::Status RawError(const inference::ModelConfig& config, std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat("raw binary request (Inference-Header-Content-Length: 0) for model '", config.name(),
             "': ", what));
}

}  // namespace

absl::StatusOr<InferRequest> DecodeRawInferRequest(std::string body,
                                                   const inference::ModelConfig& config,
                                                   size_t max_elements) {
  if (config.input_size() != 1) {
    return RawError(config, StrCat("Raw request must only have 1 input (found 1) to be deduced but got ",
                                   config.input_size(), " inputs in '", config.name(),
                                   "' model configuration"));
  }
  const inference::ModelInput& spec = config.input(0);
  Tensor input;
  input.name = spec.name();
  input.dtype = FromConfigDataType(spec.data_type());
  if (config.max_batch_size() > 0) input.shape.push_back(1);
  int variable_index = -1;
  int64_t known = 1;  // product of the fixed dimensions
  for (int64_t dim : spec.dims()) {
    if (dim < 0) {
      if (variable_index >= 0) {
        return RawError(config, StrCat("The shape of the raw input '", spec.name(),
                                       "' can not be deduced because there are more than one "
                                       "variable-sized dimension (dims [",
                                       StrJoin(spec.dims(), ","), "])"));
      }
      variable_index = static_cast<int>(input.shape.size());
    } else if (std::optional<int64_t> product = CheckedMul(known, dim)) {
      known = *product;
    } else {
      return RawError(config, StrCat("input '", spec.name(), "' dims are too large"));
    }
    input.shape.push_back(dim);
  }

  if (input.dtype == DataType::kBytes) {
    if (variable_index >= 0 || known != 1) {
      return RawError(config, StrCat("For BYTE datatype raw input '", spec.name(),
                                     "', the model must have input shape [1] (it has dims [",
                                     StrJoin(spec.dims(), ","), "]; the body is one element)"));
    }
    if (body.size() > UINT32_MAX) {
      return RawError(config, StrCat("a BYTES element of ", body.size(),
                                     " bytes exceeds the 4-byte length prefix"));
    }
    std::string element;
    element.reserve(body.size() + 4);
    AppendBytesElement(element, body);
    input.data = Buffer::FromString(std::move(element));
  } else {
    const size_t element_size = DataTypeByteSize(input.dtype);
    if (element_size == 0) {
      return RawError(config, StrCat("input '", spec.name(), "' has an unsupported datatype"));
    }
    if (body.size() % element_size != 0) {
      return RawError(config, StrCat("body of ", body.size(), " bytes is not a whole number of ",
                                     DataTypeName(input.dtype), " elements (", element_size,
                                     " bytes each) for input '", spec.name(), "'"));
    }
    const uint64_t elements = body.size() / element_size;
    if (variable_index >= 0) {
      if (known == 0 ? elements != 0 : elements % static_cast<uint64_t>(known) != 0) {
        return RawError(config, StrCat("body of ", elements, " ", DataTypeName(input.dtype),
                                       " elements does not fill input '", spec.name(), "' dims [",
                                       StrJoin(spec.dims(), ","), "] (a multiple of ", known,
                                       " elements)"));
      }
      input.shape[variable_index] =
          known == 0 ? 0 : static_cast<int64_t>(elements / static_cast<uint64_t>(known));
    } else if (elements != static_cast<uint64_t>(known)) {
      return RawError(config, StrCat("input '", spec.name(), "' ", DataTypeName(input.dtype), " ",
                                     ShapeToString(input.shape), " needs ",
                                     static_cast<uint64_t>(known) * element_size,
                                     " bytes; the body has ", body.size()));
    }
    if (elements > max_elements) {
      return RawError(config, StrCat("input '", spec.name(), "' has ", elements,
                                     " elements, more than the limit of ", max_elements));
    }
    auto owner = std::make_shared<std::string>(std::move(body));
    input.data = Buffer::View(owner, reinterpret_cast<const uint8_t*>(owner->data()), owner->size());
  }

  InferRequest request;
  request.inputs.push_back(std::move(input));
  request.parameters.emplace("binary_data_output", true);
  return request;
}

}  // namespace infera
