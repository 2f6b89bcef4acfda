// The model configs `infera analyze` sends and writes: the model's own config.pbtxt
// (parsed by the server's parser) with a point's fields changed, rendered as the JSON of
// a repository load override (`{"parameters":{"config":"<ModelConfig as JSON>"}}`, the
// body of POST /v2/repository/models/{m}/load) and as text proto for the config.pbtxt
// it writes (the user's own text, edited in place: config_edit.h).
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_ANALYZE_CONFIG_RENDER_H_
#define INFERA_TOOLS_ANALYZE_CONFIG_RENDER_H_

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "model_config.pb.h"

namespace infera::analyze {

// <model_dir>/config.pbtxt parsed (schema errors name the file and line). Not validated
// and no defaults filled in: what is written back stays the model's own config.
absl::StatusOr<inference::ModelConfig> ReadBaseConfig(const std::filesystem::path& model_dir);

// <model_dir>/config.pbtxt as text (what ReadBaseConfig parses).
absl::StatusOr<std::string> ReadBaseConfigText(const std::filesystem::path& model_dir);

// The body of a load request overriding the config with `config`.
absl::StatusOr<std::string> LoadOverrideBody(const inference::ModelConfig& config);

// `config` as config.pbtxt text (protobuf text format), with a leading comment line.
absl::StatusOr<std::string> RenderConfigText(const inference::ModelConfig& config, const std::string& comment);

// The config.pbtxt to write for `chosen`: "# <comment>" then `original_text` (which
// parses to `base`) with the changed fields edited in place, comments and layout kept.
// When an edit cannot be made in place, the whole config rendered (RenderConfigText)
// with a second comment line saying so.
absl::StatusOr<std::string> RenderEditedConfig(const std::string& original_text, const inference::ModelConfig& base,
                                               const inference::ModelConfig& chosen, const std::string& comment);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_CONFIG_RENDER_H_
