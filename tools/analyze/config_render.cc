#include "tools/analyze/config_render.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include "common/str_cat.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "repository/model_config_loader.h"
#include "tools/analyze/config_edit.h"

namespace infera::analyze {

absl::StatusOr<inference::ModelConfig> ReadBaseConfig(const std::filesystem::path& model_dir) {
  auto text = ReadModelConfigText(model_dir);
  if (!text.ok()) return text.status();
  return ParseModelConfig(*text, (model_dir / kModelConfigFilename).string());
}

absl::StatusOr<std::string> ReadBaseConfigText(const std::filesystem::path& model_dir) {
  return ReadModelConfigText(model_dir);
}

absl::StatusOr<std::string> LoadOverrideBody(const inference::ModelConfig& config) {
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(config, &json);
  if (!status.ok()) return absl::InternalError(StrCat("cannot render the config as JSON: ", status.ToString()));
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("parameters");
  writer.StartObject();
  writer.Key("config");
  writer.String(json.data(), static_cast<rapidjson::SizeType>(json.size()));
  writer.EndObject();
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

absl::StatusOr<std::string> RenderConfigText(const inference::ModelConfig& config, const std::string& comment) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(config, &text)) {
    return absl::InternalError("cannot render the config as text proto");
  }
  std::string out;
  if (!comment.empty()) out = StrCat("# ", comment, "\n");
  return out + text;
}

}  // namespace infera::analyze

namespace infera::analyze {

absl::StatusOr<std::string> RenderEditedConfig(const std::string& original_text, const inference::ModelConfig& base,
                                               const inference::ModelConfig& chosen, const std::string& comment) {
  auto edited = EditConfigText(original_text, base, chosen);
  if (edited.ok()) return StrCat("# ", comment, "\n", *edited);
  return RenderConfigText(chosen, StrCat(comment, "\n# (the model's config.pbtxt could not be edited in place: ",
                                         edited.status().message(), "; written whole, its comments lost)"));
}

}  // namespace infera::analyze
