#include "protocol/model_answers.h"

#include <utility>
#include <vector>

#include "api/server_extensions.h"
#include "common/json_reader.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "rapidjson/document.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

using inference::ModelMetadataResponse;
using TensorMetadataList = google::protobuf::RepeatedPtrField<ModelMetadataResponse::TensorMetadata>;

template <typename Tensors>
void AddTensorMetadata(const inference::ModelConfig& config, const Tensors& tensors,
                       TensorMetadataList* out) {
  for (const auto& t : tensors) {
    ModelMetadataResponse::TensorMetadata* meta = out->Add();
    meta->set_name(t.name());
    const std::string_view datatype = DataTypeName(FromConfigDataType(t.data_type()));
    meta->set_datatype(datatype.data(), datatype.size());
    const Shape shape = ClientShape(config, t.dims());
    meta->mutable_shape()->Add(shape.begin(), shape.end());
  }
}

void SetDuration(const StatisticsSnapshot::Duration& from, inference::StatisticDuration* to) {
  to->set_count(from.count);
  to->set_ns(from.ns);
}

void AddStatistics(const ModelVersionSnapshot& model, inference::ModelStatistics* out) {
  const StatisticsSnapshot& s = model.statistics;
  out->set_name(model.name);
  out->set_version(std::to_string(model.version));
  out->set_last_inference(s.last_inference_ms);
  out->set_inference_count(s.inference_count);
  out->set_execution_count(s.execution_count);
  inference::InferStatistics* stats = out->mutable_inference_stats();
  SetDuration(s.success, stats->mutable_success());
  SetDuration(s.fail, stats->mutable_fail());
  SetDuration(s.queue, stats->mutable_queue());
  SetDuration(s.compute_input, stats->mutable_compute_input());
  SetDuration(s.compute_infer, stats->mutable_compute_infer());
  SetDuration(s.compute_output, stats->mutable_compute_output());
  SetDuration(s.cache_hit, stats->mutable_cache_hit());  // the response cache (docs/response_cache.md)
  SetDuration(s.cache_miss, stats->mutable_cache_miss());
  for (const StatisticsSnapshot::BatchSize& b : s.batch_stats) {
    inference::InferBatchStatistics* batch = out->add_batch_stats();
    batch->set_batch_size(b.batch_size);
    SetDuration(b.compute_input, batch->mutable_compute_input());
    SetDuration(b.compute_infer, batch->mutable_compute_infer());
    SetDuration(b.compute_output, batch->mutable_compute_output());
  }
}

}  // namespace

void BuildServerMetadata(std::string_view name, std::string_view version,
                         inference::ServerMetadataResponse* response) {
  response->set_name(name.data(), name.size());
  response->set_version(version.data(), version.size());
  for (std::string_view extension : kServerExtensions) {
    response->add_extensions(extension.data(), extension.size());
  }
}

absl::Status BuildModelMetadata(const ModelManager& manager, std::string_view name,
                                std::optional<int64_t> version,
                                inference::ModelMetadataResponse* response) {
  ASSIGN_OR_RETURN(ModelHandle model, manager.GetModelVersion(name, version));
  const inference::ModelConfig& config = model->config();
  response->set_name(config.name());
  if (version) {
    response->add_versions(std::to_string(*version));
  } else {
    for (int64_t v : manager.ReadyVersions(name).value_or(std::vector<int64_t>{})) {
      response->add_versions(std::to_string(v));
    }
  }
  response->set_platform(PlatformName(config));
  AddTensorMetadata(config, config.input(), response->mutable_inputs());
  AddTensorMetadata(config, config.output(), response->mutable_outputs());
  return absl::OkStatus();
}

absl::Status BuildModelConfig(const ModelManager& manager, std::string_view name,
                              std::optional<int64_t> version, inference::ModelConfigResponse* response) {
  ASSIGN_OR_RETURN(ModelHandle model, manager.GetModelVersion(name, version));
  *response->mutable_config() = model->config();
  // Load-time facts (e.g. infera.precision.cosine) as read-only parameters: the place a
  // Triton user looks for how a version was set up, the same over HTTP and gRPC.
  for (auto& [key, value] : model->ReportedParameters()) {
    (*response->mutable_config()->mutable_parameters())[key].set_string_value(value);
  }
  return absl::OkStatus();
}

absl::Status BuildModelStatistics(const ModelManager& manager, std::string_view name,
                                  std::optional<int64_t> version,
                                  inference::ModelStatisticsResponse* response) {
  ASSIGN_OR_RETURN(std::vector<ModelVersionSnapshot> models, manager.Snapshots(name, version));
  for (const ModelVersionSnapshot& model : models) AddStatistics(model, response->add_model_stats());
  return absl::OkStatus();
}

void BuildRepositoryIndex(const ModelManager& manager, bool ready_only,
                          inference::RepositoryIndexResponse* response) {
  for (const ModelIndexEntry& entry : manager.Index()) {
    if (ready_only && entry.state != ModelState::kReady) continue;
    auto* model = response->add_models();
    model->set_name(entry.name);
    if (entry.version) model->set_version(std::to_string(*entry.version));
    const std::string_view state = ModelStateName(entry.state);
    model->set_state(state.data(), state.size());
    model->set_reason(entry.reason);
  }
}

absl::Status BuildTraceSetting(const ModelManager& manager, TraceSettings& settings,
                               const inference::TraceSettingRequest& request,
                               inference::TraceSettingResponse* response) {
  const std::string& model = request.model_name();
  if (!model.empty()) {
    // Triton's text for the trace extension (its infer answers word it differently).
    if (absl::Status known = manager.ReadyVersions(model).status(); absl::IsNotFound(known)) {
      return absl::NotFoundError(StrCat("Request for unknown model : ", model));
    } else if (!known.ok()) {
      return known;
    }
  }
  TraceSettings::Map current;
  if (request.settings().empty()) {
    current = settings.Get(model);
  } else {
    std::vector<TraceSettings::Change> changes;
    for (const auto& [name, value] : request.settings()) {
      changes.emplace_back(name, std::vector<std::string>(value.value().begin(), value.value().end()));
    }
    std::sort(changes.begin(), changes.end());  // map order is unspecified: errors stay stable
    ASSIGN_OR_RETURN(current, settings.Update(model, changes));
  }
  for (auto& [name, values] : current) {
    auto& out = (*response->mutable_settings())[name];
    for (std::string& value : values) out.add_value(std::move(value));
  }
  return absl::OkStatus();
}

absl::Status CheckExplicitModelControl(const ModelManager& manager) {
  if (manager.mode() == ModelControlMode::kExplicit) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "explicit model load / unload is not allowed unless --model-control-mode=explicit");
}

absl::StatusOr<inference::ModelConfig> ParseConfigOverride(std::string_view json, std::string_view what) {
  // The same nesting and size limits as every JSON document the server reads.
  rapidjson::Document limits_check;
  RETURN_IF_ERROR(ReadJson(json, what, limits_check));
  inference::ModelConfig config;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(json), &config);
  if (!status.ok()) {
    return absl::InvalidArgumentError(StrCat(what, " is not a valid model config: ", status.ToString()));
  }
  return config;
}

std::string RoutingKey(const Parameters& parameters, std::optional<std::string_view> header) {
  if (auto key = GetStringParameter(parameters, "routing_key"); key && !key->empty()) return *key;
  if (auto id = GetIntParameter(parameters, "routing_key")) return std::to_string(*id);
  return header ? std::string(*header) : std::string();
}

}  // namespace infera
