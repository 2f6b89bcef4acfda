#include "tools/bench/model_metadata.h"

#include <charconv>

#include "common/str_cat.h"
#include "rapidjson/document.h"

namespace infera::bench {
namespace {

absl::StatusOr<std::vector<TensorSpec>> ParseTensors(const rapidjson::Value& object,
                                                     const char* key) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || !it->value.IsArray()) {
    return absl::InvalidArgumentError(StrCat("model metadata has no '", key, "' array"));
  }
  std::vector<TensorSpec> tensors;
  for (const auto& entry : it->value.GetArray()) {
    if (!entry.IsObject() || !entry.HasMember("name") || !entry["name"].IsString() ||
        !entry.HasMember("datatype") || !entry["datatype"].IsString() ||
        !entry.HasMember("shape") || !entry["shape"].IsArray()) {
      return absl::InvalidArgumentError(
          StrCat("model metadata: an entry of '", key, "' lacks name, datatype or shape"));
    }
    TensorSpec spec;
    spec.name = entry["name"].GetString();
    std::optional<DataType> dtype = ParseDataTypeName(entry["datatype"].GetString());
    if (!dtype) {
      return absl::InvalidArgumentError(StrCat("model metadata: ", key, " '", spec.name,
                                               "' has unknown datatype '",
                                               entry["datatype"].GetString(), "'"));
    }
    spec.dtype = *dtype;
    for (const auto& dim : entry["shape"].GetArray()) {
      if (!dim.IsInt64()) {
        return absl::InvalidArgumentError(
            StrCat("model metadata: ", key, " '", spec.name, "' has a non-integer dimension"));
      }
      spec.shape.push_back(dim.GetInt64());
    }
    tensors.push_back(std::move(spec));
  }
  return tensors;
}

}  // namespace

absl::StatusOr<ModelMetadata> ParseModelMetadata(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError("model metadata is not a JSON object");
  }
  ModelMetadata metadata;
  if (doc.HasMember("name") && doc["name"].IsString()) metadata.name = doc["name"].GetString();
  if (doc.HasMember("platform") && doc["platform"].IsString()) {
    metadata.platform = doc["platform"].GetString();
  }
  if (doc.HasMember("versions") && doc["versions"].IsArray()) {
    for (const auto& v : doc["versions"].GetArray()) {
      if (v.IsString()) metadata.versions.emplace_back(v.GetString());
    }
  }
  auto inputs = ParseTensors(doc, "inputs");
  if (!inputs.ok()) return inputs.status();
  metadata.inputs = std::move(*inputs);
  auto outputs = ParseTensors(doc, "outputs");
  if (!outputs.ok()) return outputs.status();
  metadata.outputs = std::move(*outputs);
  return metadata;
}

std::optional<int64_t> ParseMaxBatchSize(std::string_view config_json) {
  rapidjson::Document doc;
  doc.Parse(config_json.data(), config_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  // Triton's config JSON; some servers wrap it as {"config": {...}}.
  const rapidjson::Value* config = &doc;
  if (doc.HasMember("config") && doc["config"].IsObject()) config = &doc["config"];
  auto it = config->FindMember("max_batch_size");
  if (it == config->MemberEnd()) return std::nullopt;
  if (it->value.IsInt64()) return it->value.GetInt64();
  if (it->value.IsString()) {  // protobuf JSON writes 64-bit ints as strings
    int64_t value = 0;
    std::string_view text = it->value.GetString();
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  return std::nullopt;
}

absl::Status ParseShapeOverride(std::string_view text, std::map<std::string, Shape>* overrides) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return absl::InvalidArgumentError(StrCat("--shape '", text, "' is not NAME:D1,D2,..."));
  }
  Shape shape;
  std::string_view dims = text.substr(colon + 1);
  while (!dims.empty()) {
    const size_t comma = dims.find(',');
    const std::string_view dim = dims.substr(0, comma);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
    if (dim.empty() || ec != std::errc() || end != dim.data() + dim.size() || value < 1) {
      return absl::InvalidArgumentError(
          StrCat("--shape '", text, "': dimensions must be integers >= 1"));
    }
    shape.push_back(value);
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
  }
  (*overrides)[std::string(text.substr(0, colon))] = std::move(shape);
  return absl::OkStatus();
}

bool ModelBatches(const ModelMetadata& metadata, const std::map<std::string, Shape>& overrides) {
  if (metadata.max_batch_size) return *metadata.max_batch_size > 0;
  if (metadata.inputs.empty()) return false;
  for (const TensorSpec& input : metadata.inputs) {
    if (input.shape.empty() || input.shape[0] != -1) return false;
    auto it = overrides.find(input.name);
    if (it != overrides.end() && it->second.size() == input.shape.size()) return false;
  }
  return true;
}

absl::StatusOr<std::vector<TensorSpec>> ResolveInputShapes(
    const ModelMetadata& metadata, const std::map<std::string, Shape>& overrides,
    int64_t batch_size, bool allow_variable) {
  for (const auto& [name, shape] : overrides) {
    bool known = false;
    for (const TensorSpec& input : metadata.inputs) known |= input.name == name;
    if (!known) return absl::InvalidArgumentError(StrCat("--shape: the model has no input '", name, "'"));
  }
  const bool batches = ModelBatches(metadata, overrides);
  if (!batches && batch_size != 1) {
    return absl::InvalidArgumentError(
        StrCat("-b ", batch_size, ": model '", metadata.name, "' does not batch (use -b 1)"));
  }
  if (metadata.max_batch_size && batches && batch_size > *metadata.max_batch_size) {
    return absl::InvalidArgumentError(StrCat("-b ", batch_size, " exceeds the model's max_batch_size ",
                                             *metadata.max_batch_size));
  }
  std::vector<TensorSpec> resolved;
  for (const TensorSpec& input : metadata.inputs) {
    Shape dims(input.shape.begin() + (batches ? 1 : 0), input.shape.end());
    if (auto it = overrides.find(input.name); it != overrides.end()) {
      if (it->second.size() != dims.size()) {
        return absl::InvalidArgumentError(
            StrCat("--shape ", input.name, ": has ", it->second.size(), " dimensions, the input has ",
                   dims.size(), batches ? " (without the batch dimension)" : ""));
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] != -1 && dims[i] != it->second[i]) {
          return absl::InvalidArgumentError(StrCat("--shape ", input.name, ": dimension ", i,
                                                   " is fixed at ", dims[i], " by the model"));
        }
      }
      dims = it->second;
    }
    for (int64_t d : dims) {
      if (d < 0 && !allow_variable) {
        return absl::InvalidArgumentError(
            StrCat("input '", input.name, "' has a variable dimension ", ShapeToString(dims),
                   ": give it with --shape ", input.name, ":D1,D2,..."));
      }
    }
    TensorSpec spec = input;
    spec.shape = std::move(dims);
    if (batches) spec.shape.insert(spec.shape.begin(), batch_size);
    resolved.push_back(std::move(spec));
  }
  return resolved;
}

}  // namespace infera::bench
