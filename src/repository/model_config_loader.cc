#include "repository/model_config_loader.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "api/data_type.h"
#include "common/checked_math.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "repository/confined_path.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

// Collects protobuf's parse errors as "file:line:col: message (at: `<line text>`)".
// Protobuf's own messages do not always name the field ("Expected integer, got ..."),
// so the offending line is quoted to show it.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  ErrorCollector(std::string_view source, std::string_view text)
      : source_(source), text_(text) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    Add(line, column, message);
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    Add(line, column, StrCat("warning: ", message));
  }
  const std::string& errors() const { return errors_; }

 private:
  void Add(int line, int column, const std::string& message) {
    if (!errors_.empty()) errors_ += "; ";
    errors_ += StrCat(source_, ":", line + 1, ":", column + 1, ": ", message);
    std::string_view quoted = LineText(line);
    if (!quoted.empty()) errors_ += StrCat(" (at: `", quoted, "`)");
  }
  // Text of 0-based line `line`, trimmed and cut to 120 characters.
  std::string_view LineText(int line) const {
    size_t start = 0;
    for (int i = 0; i < line; ++i) {
      start = text_.find('\n', start);
      if (start == std::string_view::npos) return {};
      ++start;
    }
    size_t end = text_.find('\n', start);
    std::string_view result = text_.substr(start, end == std::string_view::npos ? end : end - start);
    while (!result.empty() && (result.front() == ' ' || result.front() == '\t')) result.remove_prefix(1);
    while (!result.empty() && (result.back() == ' ' || result.back() == '\r')) result.remove_suffix(1);
    return result.substr(0, 120);
  }
  std::string source_;
  std::string_view text_;
  std::string errors_;
};

absl::Status FieldError(std::string_view source, std::string_view field,
                        std::string_view problem) {
  return absl::InvalidArgumentError(StrCat(source, ": ", field, ": ", problem));
}

absl::Status ValidateDims(std::string_view source, std::string_view field,
                          const google::protobuf::RepeatedField<int64_t>& dims) {
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i] < -1) {
      return FieldError(source, StrCat(field, ".dims[", i, "]"),
                        StrCat(dims[i], " is not a dimension (use -1 for variable size)"));
    }
    if (dims[i] > kMaxDimension) {
      return FieldError(source, StrCat(field, ".dims[", i, "]"),
                        StrCat(dims[i], " is more than the limit of ", kMaxDimension));
    }
  }
  return absl::OkStatus();
}

// A reshape must keep the element count (checked when neither shape has -1) and the
// number of variable dimensions.
absl::Status ValidateReshape(std::string_view source, std::string_view field,
                             const google::protobuf::RepeatedField<int64_t>& dims,
                             const inference::ModelTensorReshape& reshape) {
  RETURN_IF_ERROR(ValidateDims(source, StrCat(field, ".reshape"), reshape.shape()));
  // Element counts in checked arithmetic: dims are bounded one by one, not their product.
  auto count = [&](const google::protobuf::RepeatedField<int64_t>& shape, int* variable)
      -> absl::StatusOr<int64_t> {
    int64_t product = 1;
    for (int64_t d : shape) {
      if (d < 0) {
        ++*variable;
        continue;
      }
      std::optional<int64_t> next = CheckedMul(product, d);
      if (!next) {
        return FieldError(source, field,
                          StrCat("shape [", StrJoin(shape, ","), "] has more than 2^63 elements"));
      }
      product = *next;
    }
    return product;
  };
  int dims_variable = 0, reshape_variable = 0;
  ASSIGN_OR_RETURN(const int64_t dims_count, count(dims, &dims_variable));
  ASSIGN_OR_RETURN(const int64_t reshape_count, count(reshape.shape(), &reshape_variable));
  if (dims_variable != reshape_variable ||
      (dims_variable == 0 && dims_count != reshape_count)) {
    return FieldError(source, StrCat(field, ".reshape"),
                      StrCat("shape [", StrJoin(reshape.shape(), ","),
                             "] does not hold the same elements as dims [",
                             StrJoin(dims, ","), "]"));
  }
  return absl::OkStatus();
}

template <typename TensorConfig>
absl::Status ValidateTensors(std::string_view source, std::string_view kind,
                             const google::protobuf::RepeatedPtrField<TensorConfig>& tensors) {
  std::set<std::string> names;
  for (int i = 0; i < tensors.size(); ++i) {
    const TensorConfig& t = tensors[i];
    const std::string field = StrCat(kind, "[", i, "]");
    if (t.name().empty()) return FieldError(source, StrCat(field, ".name"), "must not be empty");
    if (!names.insert(t.name()).second) {
      return FieldError(source, StrCat(field, ".name"),
                        StrCat("'", t.name(), "' is declared twice"));
    }
    if (t.data_type() == inference::TYPE_INVALID) {
      return FieldError(source, StrCat(field, ".data_type"),
                        StrCat("missing or TYPE_INVALID for '", t.name(), "'"));
    }
    if (t.is_shape_tensor()) {
      return FieldError(source, StrCat(field, ".is_shape_tensor"),
                        "shape tensors are a TensorRT feature and are not supported");
    }
    RETURN_IF_ERROR(ValidateDims(source, field, t.dims()));
    if (t.has_reshape()) RETURN_IF_ERROR(ValidateReshape(source, field, t.dims(), t.reshape()));
  }
  return absl::OkStatus();
}

absl::Status ValidateVersionPolicy(std::string_view source, inference::ModelConfig& config) {
  inference::ModelVersionPolicy& policy = *config.mutable_version_policy();
  switch (policy.policy_choice_case()) {
    case inference::ModelVersionPolicy::POLICY_CHOICE_NOT_SET:
      policy.mutable_latest()->set_num_versions(1);
      return absl::OkStatus();
    case inference::ModelVersionPolicy::kLatest:
      if (policy.latest().num_versions() == 0) policy.mutable_latest()->set_num_versions(1);
      if (policy.latest().num_versions() > kMaxLatestVersions) {
        return FieldError(source, "version_policy.latest.num_versions",
                          StrCat(policy.latest().num_versions(), " is more than the limit of ",
                                 kMaxLatestVersions, " (use all { } for every version)"));
      }
      return absl::OkStatus();
    case inference::ModelVersionPolicy::kAll:
      return absl::OkStatus();
    case inference::ModelVersionPolicy::kSpecific:
      if (policy.specific().versions_size() == 0) {
        return FieldError(source, "version_policy.specific.versions", "must list a version");
      }
      for (int64_t v : policy.specific().versions()) {
        if (v < 1) {
          return FieldError(source, "version_policy.specific.versions",
                            StrCat(v, " is not a version (versions are integers >= 1)"));
        }
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status ValidateInstanceGroups(std::string_view source, inference::ModelConfig& config,
                                    const MachineLimits& machine) {
  if (config.instance_group_size() == 0) {
    auto* group = config.add_instance_group();
    group->set_count(1);
    group->set_kind(inference::ModelInstanceGroup::KIND_CPU);
  }
  for (int i = 0; i < config.instance_group_size(); ++i) {
    auto& group = *config.mutable_instance_group(i);
    const std::string field = StrCat("instance_group[", i, "]");
    if (group.count() < 0) {
      return FieldError(source, StrCat(field, ".count"), StrCat(group.count(), " is negative"));
    }
    if (group.count() == 0) group.set_count(1);
    if (group.count() > kMaxInstancesPerGroup) {
      return FieldError(source, StrCat(field, ".count"),
                        StrCat(group.count(), " instances is more than the limit of ",
                               kMaxInstancesPerGroup));
    }
    if (group.kind() == inference::ModelInstanceGroup::KIND_GPU || group.gpus_size() > 0) {
      return FieldError(source, StrCat(field, ".kind"),
                        "KIND_GPU (or gpus) requested, but this infera build has no GPU "
                        "support; use KIND_CPU");
    }
    if (group.kind() == inference::ModelInstanceGroup::KIND_AUTO) {
      group.set_kind(inference::ModelInstanceGroup::KIND_CPU);
    }
    if (group.name().empty()) group.set_name(StrCat(config.name(), "_", i));
  }
  // Each instance is a thread (and for most backends a copy of its state): the total
  // over all groups is bounded by the cores, not only each group.
  int64_t total = 0;
  for (const auto& group : config.instance_group()) total += group.count();
  if (total > machine.MaxInstancesPerModel()) {
    return FieldError(source, "instance_group",
                      StrCat(total, " instances in ", config.instance_group_size(),
                             " groups is more than the limit of ", machine.MaxInstancesPerModel(),
                             " per model (", kInstancesPerCore, " per core, at least ",
                             kMinInstancesPerModelLimit, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateQueuePolicy(std::string_view source, std::string_view field,
                                 const inference::ModelQueuePolicy& policy) {
  if (policy.default_timeout_microseconds() > kMaxTimeoutMicros) {
    return FieldError(source, StrCat(field, ".default_timeout_microseconds"),
                      StrCat(policy.default_timeout_microseconds(), " is more than the limit of ",
                             kMaxTimeoutMicros, " (1 day)"));
  }
  if (policy.max_queue_size() > kMaxQueueSize) {
    return FieldError(source, StrCat(field, ".max_queue_size"),
                      StrCat(policy.max_queue_size(), " is more than the limit of ", kMaxQueueSize));
  }
  return absl::OkStatus();
}

absl::Status ValidateDynamicBatching(std::string_view source, inference::ModelConfig& config) {
  if (!config.has_dynamic_batching()) return absl::OkStatus();
  const auto& batching = config.dynamic_batching();
  if (config.max_batch_size() == 0) {
    return FieldError(source, "dynamic_batching",
                      "requires max_batch_size > 0 (the model must accept a batch dimension)");
  }
  for (int i = 0; i < batching.preferred_batch_size_size(); ++i) {
    const int32_t size = batching.preferred_batch_size(i);
    if (size < 1 || size > config.max_batch_size()) {
      return FieldError(source, StrCat("dynamic_batching.preferred_batch_size[", i, "]"),
                        StrCat(size, " is outside [1, max_batch_size=", config.max_batch_size(),
                               "]"));
    }
  }
  if (batching.max_queue_delay_microseconds() > kMaxQueueDelayMicros) {
    return FieldError(source, "dynamic_batching.max_queue_delay_microseconds",
                      StrCat(batching.max_queue_delay_microseconds(), " is more than the limit of ",
                             kMaxQueueDelayMicros, " (1 hour)"));
  }
  const uint64_t levels = batching.priority_levels();
  if (levels > kMaxPriorityLevels) {
    return FieldError(source, "dynamic_batching.priority_levels",
                      StrCat(levels, " is more than the limit of ", kMaxPriorityLevels));
  }
  RETURN_IF_ERROR(ValidateQueuePolicy(source, "dynamic_batching.default_queue_policy",
                                      batching.default_queue_policy()));
  for (const auto& [level, policy] : batching.priority_queue_policy()) {
    RETURN_IF_ERROR(ValidateQueuePolicy(
        source, StrCat("dynamic_batching.priority_queue_policy[", level, "]"), policy));
  }
  if (levels > 0 &&
      (batching.default_priority_level() < 1 || batching.default_priority_level() > levels)) {
    return FieldError(source, "dynamic_batching.default_priority_level",
                      StrCat(batching.default_priority_level(), " is outside [1, priority_levels=",
                             levels, "]"));
  }
  for (const auto& [level, unused] : batching.priority_queue_policy()) {
    if (level < 1 || level > levels) {
      return FieldError(source, "dynamic_batching.priority_queue_policy",
                        StrCat("level ", level, " is outside [1, priority_levels=", levels, "]"));
    }
  }
  return absl::OkStatus();
}

// A warmup file is named relative to the model's warmup/ folder and must stay inside
// it (Triton's rule). This is the lexical check, made before any file is touched; the
// warmup builder resolves symbolic links too (manager/warmup.h).
absl::Status ValidateWarmupFileName(std::string_view source, std::string_view field,
                                    const std::string& name) {
  if (EscapesLexically(name)) {
    return FieldError(source, field,
                      "must name a file inside the model's warmup/ folder (a relative path "
                      "without '..')");
  }
  return absl::OkStatus();
}

absl::Status ValidateWarmup(std::string_view source, const inference::ModelConfig& config) {
  // Totals over every sample: each is allocated at load and run on every instance.
  int64_t total_bytes = 0;
  int64_t total_runs = 0;
  for (int i = 0; i < config.model_warmup_size(); ++i) {
    const auto& warmup = config.model_warmup(i);
    const std::string field = StrCat("model_warmup[", i, "]");
    if (config.max_batch_size() == 0 && warmup.batch_size() > 1) {
      return FieldError(source, StrCat(field, ".batch_size"),
                        "must be 0 or 1 for a model without batching (max_batch_size 0)");
    }
    if (config.max_batch_size() > 0 &&
        warmup.batch_size() > static_cast<uint32_t>(config.max_batch_size())) {
      return FieldError(source, StrCat(field, ".batch_size"),
                        StrCat(warmup.batch_size(), " exceeds max_batch_size ",
                               config.max_batch_size()));
    }
    if (warmup.count() > kMaxWarmupCount) {
      return FieldError(source, StrCat(field, ".count"),
                        StrCat(warmup.count(), " is more than the limit of ", kMaxWarmupCount));
    }
    total_runs += std::max<uint32_t>(1, warmup.count());
    if (total_runs > kMaxWarmupCount) {
      return FieldError(source, "model_warmup",
                        StrCat(total_runs, " runs in all (count summed over samples) is more than "
                               "the limit of ", kMaxWarmupCount));
    }
    for (const auto& [name, input] : warmup.inputs()) {
      const inference::ModelInput* declared = FindConfigInput(config, name);
      if (declared == nullptr) {
        return FieldError(source, StrCat(field, ".inputs"),
                          StrCat("'", name, "' is not an input of the model"));
      }
      if (input.data_type() != declared->data_type()) {
        return FieldError(source, StrCat(field, ".inputs[", name, "].data_type"),
                          "does not match the input's data_type");
      }
      if (input.input_data_type_case() ==
          inference::ModelWarmup::Input::INPUT_DATA_TYPE_NOT_SET) {
        return FieldError(source, StrCat(field, ".inputs[", name, "]"),
                          "needs zero_data, random_data or input_data_file");
      }
      const std::string input_field = StrCat(field, ".inputs[", name, "]");
      // The sample is allocated at load: its bytes are bounded, in checked arithmetic.
      std::optional<int64_t> bytes = std::max<int64_t>(
          // BYTES samples are empty strings: a 4-byte length prefix each.
          4, static_cast<int64_t>(DataTypeByteSize(FromConfigDataType(input.data_type()))));
      if (config.max_batch_size() > 0) bytes = CheckedMul(*bytes, std::max<uint32_t>(1, warmup.batch_size()));
      for (int64_t d : input.dims()) {
        if (d < 0) {
          return FieldError(source, StrCat(input_field, ".dims"), "must be fully specified (no -1)");
        }
        if (bytes) bytes = CheckedMul(*bytes, d);
      }
      if (!bytes || *bytes > kMaxWarmupInputBytes) {
        return FieldError(source, StrCat(input_field, ".dims"),
                          StrCat("[", StrJoin(input.dims(), ","), "] is more than the limit of ",
                                 kMaxWarmupInputBytes, " bytes per warmup input"));
      }
      total_bytes += *bytes;  // each term <= 256 MiB, at most 1000 samples: no overflow
      if (total_bytes > kMaxWarmupTotalBytes) {
        return FieldError(source, "model_warmup",
                          StrCat("the samples hold more than the limit of ", kMaxWarmupTotalBytes,
                                 " bytes in all"));
      }
      if (input.has_input_data_file()) {
        RETURN_IF_ERROR(ValidateWarmupFileName(source, StrCat(input_field, ".input_data_file"),
                                               input.input_data_file()));
      }
    }
  }
  return absl::OkStatus();
}

// The shape of `ensemble_scheduling` (bounds, names); the graph and the agreement with
// the step models are checked when the ensemble loads (ensemble/ensemble_plan.h).
absl::Status ValidateEnsembleScheduling(std::string_view source, const inference::ModelConfig& config) {
  const bool is_ensemble = config.platform() == "ensemble";
  if (!is_ensemble) {
    if (config.has_ensemble_scheduling()) {
      return FieldError(source, "ensemble_scheduling", "needs platform: \"ensemble\"");
    }
    return absl::OkStatus();
  }
  if (!config.has_ensemble_scheduling() || config.ensemble_scheduling().step_size() == 0) {
    return FieldError(source, "ensemble_scheduling", "an ensemble needs at least one step");
  }
  const auto& steps = config.ensemble_scheduling().step();
  if (steps.size() > kMaxEnsembleSteps) {
    return FieldError(source, "ensemble_scheduling.step",
                      StrCat(steps.size(), " steps is more than the limit of ", kMaxEnsembleSteps));
  }
  if (config.model_warmup_size() > 0) {
    return FieldError(source, "model_warmup", "an ensemble has no warmup of its own (its steps warm up)");
  }
  auto check_name = [&](const std::string& field, const std::string& name) -> absl::Status {
    if (name.empty() || name.size() > kMaxEnsembleTensorNameLength) {
      return FieldError(source, field, StrCat("tensor name must be 1 to ", kMaxEnsembleTensorNameLength,
                                              " characters"));
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < steps.size(); ++i) {
    const auto& step = steps[i];
    const std::string field = StrCat("ensemble_scheduling.step[", i, "]");
    if (step.model_name().empty()) return FieldError(source, field, "model_name is empty");
    if (step.model_name() == config.name()) {
      return FieldError(source, field, StrCat("model_name '", step.model_name(), "' is the ensemble itself"));
    }
    if (!step.model_namespace().empty()) {
      return FieldError(source, field, "model_namespace is not supported (one namespace)");
    }
    if (step.model_version() < -1) {
      return FieldError(source, field, StrCat("model_version ", step.model_version(), " must be -1 (newest), 0 (unset: newest) or a version"));
    }
    if (step.output_map().empty()) return FieldError(source, field, "output_map is empty");
    for (const auto& [key, value] : step.input_map()) {
      RETURN_IF_ERROR(check_name(StrCat(field, ".input_map[", key.substr(0, 64), "]"), key));
      RETURN_IF_ERROR(check_name(StrCat(field, ".input_map[", key.substr(0, 64), "]"), value));
    }
    for (const auto& [key, value] : step.output_map()) {
      RETURN_IF_ERROR(check_name(StrCat(field, ".output_map[", key.substr(0, 64), "]"), key));
      RETURN_IF_ERROR(check_name(StrCat(field, ".output_map[", key.substr(0, 64), "]"), value));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<inference::ModelConfig> ParseModelConfig(std::string_view text,
                                                        std::string_view source) {
  inference::ModelConfig config;
  ErrorCollector errors(source, text);
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &config)) {
    return absl::InvalidArgumentError(errors.errors().empty()
                                          ? StrCat(source, ": cannot parse")
                                          : errors.errors());
  }
  return config;
}

absl::Status ValidateModelConfig(std::string_view source, std::string_view model_name,
                                 inference::ModelConfig& config, const MachineLimits& machine) {
  if (config.name().empty()) {
    config.set_name(std::string(model_name));
  } else if (config.name() != model_name) {
    return FieldError(source, "name",
                      StrCat("'", config.name(), "' does not match the model directory '",
                             model_name, "'"));
  }
  if (config.max_batch_size() < 0) {
    return FieldError(source, "max_batch_size", StrCat(config.max_batch_size(), " is negative"));
  }
  if (config.max_batch_size() > kMaxBatchSize) {
    return FieldError(source, "max_batch_size",
                      StrCat(config.max_batch_size(), " is more than the limit of ", kMaxBatchSize));
  }
  RETURN_IF_ERROR(ValidateTensors(source, "input", config.input()));
  RETURN_IF_ERROR(ValidateTensors(source, "output", config.output()));
  RETURN_IF_ERROR(ValidateVersionPolicy(source, config));
  RETURN_IF_ERROR(ValidateInstanceGroups(source, config, machine));
  RETURN_IF_ERROR(ValidateDynamicBatching(source, config));
  RETURN_IF_ERROR(ValidateWarmup(source, config));
  RETURN_IF_ERROR(ValidateEnsembleScheduling(source, config));
  // model_transaction_policy.decoupled is the backend's to allow: ModelVersion::Load
  // refuses it for a backend that does not SupportsDecoupled() (docs/request_path.md).
  // The response cache holds one answer per request: not a decoupled model's stream
  // (Triton's check and words; docs/response_cache.md).
  if (config.response_cache().enable() && config.model_transaction_policy().decoupled()) {
    return FieldError(source, "response_cache.enable",
                      StrCat("Response Cache does not currently support model ", config.name(),
                             " with 'decoupled' transaction policy. Please disable the response cache."));
  }
  // Nor a stateful model's: its answer depends on the sequence's earlier requests.
  if (config.response_cache().enable() && config.has_sequence_batching()) {
    return FieldError(source, "response_cache.enable",
                      StrCat("Response Cache does not currently support model ", config.name(),
                             " with sequence batching scheduler. Please disable the response cache."));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadModelConfigText(const std::filesystem::path& model_dir) {
  const std::filesystem::path path = model_dir / kModelConfigFilename;
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(path.string(), ": cannot open (missing?)"));
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

absl::StatusOr<inference::ModelConfig> LoadModelConfig(const std::filesystem::path& model_dir) {
  const std::filesystem::path path = model_dir / kModelConfigFilename;
  ASSIGN_OR_RETURN(std::string text, ReadModelConfigText(model_dir));
  ASSIGN_OR_RETURN(inference::ModelConfig config, ParseModelConfig(text, path.string()));
  RETURN_IF_ERROR(
      ValidateModelConfig(path.string(), model_dir.filename().string(), config));
  return config;
}

}  // namespace infera
