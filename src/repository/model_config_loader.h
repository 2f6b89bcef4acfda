// Loads and validates a model's config.pbtxt.
//
// config.pbtxt is protobuf text format against proto/model_config.proto (Triton's field
// names). Loading is two steps, both reporting errors that name the file, the field and
// what is wrong:
//   1. ParseModelConfig: syntax and schema ("config.pbtxt:3:5: ... no field named 'foo'").
//   2. ValidateModelConfig: meaning (dims, batch sizes, policies) and defaults
//      (`name` from the directory, instance count 1, latest-1 version policy).
// Backend-specific checks come after, in Backend::ValidateConfig.
//
// Thread-safe (pure functions).
#ifndef INFERA_REPOSITORY_MODEL_CONFIG_LOADER_H_
#define INFERA_REPOSITORY_MODEL_CONFIG_LOADER_H_

#include <filesystem>
#include <string_view>

#include "absl/status/statusor.h"
#include "model_config.pb.h"
#include "repository/config_limits.h"

namespace infera {

inline constexpr std::string_view kModelConfigFilename = "config.pbtxt";

// Parses `text`; `source` (the file path) prefixes every error.
absl::StatusOr<inference::ModelConfig> ParseModelConfig(std::string_view text,
                                                        std::string_view source);

// Checks `config` for the model in directory `model_name` and fills defaults. Errors are
// "<source>: <field>: <problem>". Every numeric field is checked against its bound
// (config_limits.h), the machine-dependent ones against `machine`; warmup file names
// must stay inside the model's warmup/ folder.
absl::Status ValidateModelConfig(std::string_view source, std::string_view model_name,
                                 inference::ModelConfig& config,
                                 const MachineLimits& machine = MachineLimits::Current());

// Reads, parses and validates <model_dir>/config.pbtxt.
absl::StatusOr<inference::ModelConfig> LoadModelConfig(const std::filesystem::path& model_dir);

// The text of <model_dir>/config.pbtxt (NotFound when it cannot be read).
absl::StatusOr<std::string> ReadModelConfigText(const std::filesystem::path& model_dir);

}  // namespace infera

#endif  // INFERA_REPOSITORY_MODEL_CONFIG_LOADER_H_
