#include "grpc/infer_message_codec.h"

#include <charconv>
#include <chrono>
#include <limits>

#include "common/status.h"
#include "common/str_cat.h"
#include "grpc/tensor_contents.h"

namespace infera {
namespace {

using google::protobuf::Map;
using inference::InferParameter;
using inference::ModelInferRequest;
using inference::ModelInferResponse;

absl::StatusOr<ParameterValue> FromInferParameter(std::string_view key, const InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case InferParameter::kBoolParam: return ParameterValue(p.bool_param());
    case InferParameter::kInt64Param: return ParameterValue(p.int64_param());
    case InferParameter::kStringParam: return ParameterValue(p.string_param());
    case InferParameter::kDoubleParam: return ParameterValue(p.double_param());
    case InferParameter::kUint64Param:
      if (p.uint64_param() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return absl::InvalidArgumentError(StrCat("parameter '", key, "' value ", p.uint64_param(),
                                                 " is above the int64 range infera supports"));
      }
      return ParameterValue(static_cast<int64_t>(p.uint64_param()));
    default: break;
  }
  return absl::InvalidArgumentError(StrCat("parameter '", key, "' has no value"));
}

absl::StatusOr<Parameters> FromParameterMap(const Map<std::string, InferParameter>& map,
                                            std::string_view where) {
  Parameters parameters;
  for (const auto& [key, value] : map) {
    auto converted = FromInferParameter(key, value);
    if (!converted.ok()) {
      return absl::InvalidArgumentError(StrCat(where, converted.status().message()));
    }
    parameters.emplace(key, std::move(*converted));
  }
  return parameters;
}

void ToParameterMap(const Parameters& parameters, Map<std::string, InferParameter>* map) {
  for (const auto& [key, value] : parameters) {
    InferParameter& p = (*map)[key];
    std::visit(
        [&p](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, bool>) p.set_bool_param(v);
          if constexpr (std::is_same_v<T, int64_t>) p.set_int64_param(v);
          if constexpr (std::is_same_v<T, double>) p.set_double_param(v);
          if constexpr (std::is_same_v<T, std::string>) p.set_string_param(v);
        },
        value);
  }
}

bool HasAnyContents(const inference::InferTensorContents& c) {
  return c.bool_contents_size() || c.int_contents_size() || c.int64_contents_size() ||
         c.uint_contents_size() || c.uint64_contents_size() || c.fp32_contents_size() ||
         c.fp64_contents_size() || c.bytes_contents_size();
}

bool NamesSharedMemoryRegion(const ModelInferRequest::InferInputTensor& input) {
  return input.parameters().count("shared_memory_region") > 0;
}

// `raw_index`: this input's entry in raw_input_contents (inputs that name a shared-memory
// region have none: Triton's clients send raw contents only for the others).
absl::StatusOr<Tensor> DecodeInput(const ModelInferRequest& message, int index, int raw_index,
                                   const std::shared_ptr<const void>& owner) {
  const ModelInferRequest::InferInputTensor& input = message.inputs(index);
  const std::string what = StrCat("input '", input.name(), "'");
  if (input.name().empty()) {
    return absl::InvalidArgumentError(StrCat("input ", index, " has no name"));
  }
  Tensor tensor;
  tensor.name = input.name();
  std::optional<DataType> dtype = ParseDataTypeName(input.datatype());
  if (!dtype) {
    return absl::InvalidArgumentError(StrCat(what, " has unknown datatype '", input.datatype(),
                                             "' (expected a KServe name such as FP32 or BYTES)"));
  }
  tensor.dtype = *dtype;
  tensor.shape.assign(input.shape().begin(), input.shape().end());
  std::optional<int64_t> count = ElementCount(tensor.shape);
  if (!count) {
    return absl::InvalidArgumentError(
        StrCat(what, " has invalid shape ", ShapeToString(tensor.shape)));
  }
  for (const auto& [key, value] : input.parameters()) {
    RETURN_IF_ERROR(FromInferParameter(StrCat(what, " parameter ", key), value).status());
  }
  if (NamesSharedMemoryRegion(input)) {
    // The data is in shared memory (shm/shared_memory_binding.h resolves it).
    if (HasAnyContents(input.contents())) {
      return absl::InvalidArgumentError(
          StrCat(what, " has a shared_memory_region parameter and also contents"));
    }
    return tensor;
  }
  if (message.raw_input_contents_size() == 0) {
    ASSIGN_OR_RETURN(tensor.data,
                     DecodeTypedContents(input.contents(), tensor.dtype, *count, what));
    return tensor;
  }
  if (HasAnyContents(input.contents())) {
    return absl::InvalidArgumentError(
        StrCat(what, " sets typed contents but the request uses raw_input_contents; use one form"));
  }
  const std::string& raw = message.raw_input_contents(raw_index);
  const auto* bytes = reinterpret_cast<const uint8_t*>(raw.data());
  tensor.data = owner ? Buffer::View(owner, bytes, raw.size()) : Buffer::Copy(bytes, raw.size());
  absl::Status valid = ValidateTensorData(tensor);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        StrCat("raw_input_contents[", raw_index, "] for ", what, ": ", valid.message()));
  }
  return tensor;
}

}  // namespace

bool OutputInSharedMemory(const InferResponse& response, size_t index) {
  return index < response.shared_memory_outputs.size() && response.shared_memory_outputs[index].has_value();
}

absl::StatusOr<std::optional<int64_t>> ParseModelVersion(std::string_view version) {
  if (version.empty()) return std::optional<int64_t>();
  int64_t parsed = 0;
  auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), parsed);
  if (ec != std::errc() || end != version.data() + version.size() || parsed < 1) {
    return absl::InvalidArgumentError(
        StrCat("invalid model version '", version, "' (versions are integers >= 1)"));
  }
  return std::optional<int64_t>(parsed);
}

absl::StatusOr<InferRequest> DecodeModelInferRequest(const ModelInferRequest& message,
                                                     std::shared_ptr<const void> owner) {
  if (message.model_name().empty()) return absl::InvalidArgumentError("model_name is empty");
  InferRequest request;
  request.arrival_time = std::chrono::steady_clock::now();
  request.model_name = message.model_name();
  ASSIGN_OR_RETURN(request.model_version, ParseModelVersion(message.model_version()));
  request.id = message.id();
  ASSIGN_OR_RETURN(request.parameters, FromParameterMap(message.parameters(), ""));
  int shm_inputs = 0;
  for (const auto& input : message.inputs()) shm_inputs += NamesSharedMemoryRegion(input);
  if (message.raw_input_contents_size() > 0 &&
      message.raw_input_contents_size() != message.inputs_size() - shm_inputs) {
    return absl::InvalidArgumentError(
        StrCat("raw_input_contents has ", message.raw_input_contents_size(), " entries for ",
               message.inputs_size() - shm_inputs,
               " inputs not in shared memory; send one per input, in input order"));
  }
  request.inputs.reserve(static_cast<size_t>(message.inputs_size()));
  int raw_index = 0;
  for (int i = 0; i < message.inputs_size(); ++i) {
    const bool in_shm = NamesSharedMemoryRegion(message.inputs(i));
    ASSIGN_OR_RETURN(Tensor tensor, DecodeInput(message, i, in_shm ? -1 : raw_index, owner));
    if (!in_shm) ++raw_index;
    if (shm_inputs > 0) {
      // Kept for shm/shared_memory_binding.h (types checked by DecodeInput).
      Parameters& kept = request.input_parameters.emplace_back();
      if (in_shm) {
        ASSIGN_OR_RETURN(kept, FromParameterMap(message.inputs(i).parameters(),
                                                StrCat("input '", tensor.name, "' ")));
      }
    }
    for (const Tensor& seen : request.inputs) {
      if (seen.name == tensor.name) {
        return absl::InvalidArgumentError(StrCat("input '", tensor.name, "' already exists in request"));
      }
    }
    request.inputs.push_back(std::move(tensor));
  }
  for (const auto& output : message.outputs()) {
    if (output.name().empty()) return absl::InvalidArgumentError("a requested output has no name");
    for (const RequestedOutput& seen : request.outputs) {
      if (seen.name == output.name()) {
        return absl::InvalidArgumentError(
            StrCat("output '", output.name(), "' already exists in request"));
      }
    }
    const std::string where = StrCat("output '", output.name(), "' ");
    ASSIGN_OR_RETURN(Parameters parameters, FromParameterMap(output.parameters(), where));
    request.outputs.push_back(RequestedOutput{output.name(), std::move(parameters)});
  }
  return request;
}

absl::Status EncodeModelInferResponseHeader(const InferResponse& response, ModelInferResponse* message) {
  message->set_model_name(response.model_name);
  message->set_model_version(std::to_string(response.model_version));
  message->set_id(response.id);
  ToParameterMap(response.parameters, message->mutable_parameters());
  message->mutable_outputs()->Reserve(static_cast<int>(response.outputs.size()));
  for (size_t index = 0; index < response.outputs.size(); ++index) {
    const Tensor& output = response.outputs[index];
    const bool in_shared_memory = OutputInSharedMemory(response, index);
    // An output written into shared memory carries no data here.
    if (!in_shared_memory) {
      absl::Status valid = ValidateTensorData(output);
      if (!valid.ok()) {
        return absl::InternalError(StrCat("output '", output.name, "': ", valid.message()));
      }
    }
    ModelInferResponse::InferOutputTensor* tensor = message->add_outputs();
    tensor->set_name(output.name);
    const std::string_view datatype = DataTypeName(output.dtype);
    tensor->set_datatype(datatype.data(), datatype.size());
    tensor->mutable_shape()->Add(output.shape.begin(), output.shape.end());
    if (in_shared_memory) {
      // Written into shared memory: no contents, the region's parameters (as Triton).
      ToParameterMap(*response.shared_memory_outputs[index], tensor->mutable_parameters());
    }
  }
  return absl::OkStatus();
}

absl::Status EncodeModelInferResponse(const InferResponse& response, ModelInferResponse* message) {
  RETURN_IF_ERROR(EncodeModelInferResponseHeader(response, message));
  message->mutable_raw_output_contents()->Reserve(static_cast<int>(response.outputs.size()));
  for (size_t index = 0; index < response.outputs.size(); ++index) {
    // A shared-memory output gets an empty entry: raw_output_contents stays aligned
    // with the outputs.
    if (OutputInSharedMemory(response, index)) {
      message->add_raw_output_contents();
    } else {
      const Buffer& data = response.outputs[index].data;
      message->add_raw_output_contents(reinterpret_cast<const char*>(data.data()), data.size());
    }
  }
  return absl::OkStatus();
}

}  // namespace infera
