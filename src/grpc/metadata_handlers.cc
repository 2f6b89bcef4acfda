#include "grpc/metadata_handlers.h"

#include "api/server_extensions.h"

#include "common/status.h"
#include "common/str_cat.h"
#include "grpc/infer_message_codec.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

using inference::ModelMetadataResponse;
using TensorMetadataList =
    google::protobuf::RepeatedPtrField<ModelMetadataResponse::TensorMetadata>;

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

void ToStatisticsMessage(const ModelVersion& model, inference::ModelStatistics* out) {
  const StatisticsSnapshot s = model.statistics().Snapshot();
  out->set_name(model.name());
  out->set_version(std::to_string(model.version()));
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
  stats->mutable_cache_hit();
  stats->mutable_cache_miss();
  for (const StatisticsSnapshot::BatchSize& b : s.batch_stats) {
    inference::InferBatchStatistics* batch = out->add_batch_stats();
    batch->set_batch_size(b.batch_size);
    SetDuration(b.compute_input, batch->mutable_compute_input());
    SetDuration(b.compute_infer, batch->mutable_compute_infer());
    SetDuration(b.compute_output, batch->mutable_compute_output());
  }
}


}  // namespace


MetadataHandlers::MetadataHandlers(const ModelManager& manager, Options options)
    : manager_(manager), options_(std::move(options)) {}

bool MetadataHandlers::ServerReady() const {
  return options_.server_ready && options_.server_ready();
}

absl::Status MetadataHandlers::ModelReady(const inference::ModelReadyRequest& request,
                                          inference::ModelReadyResponse* response) const {
  ASSIGN_OR_RETURN(std::optional<int64_t> version, ParseModelVersion(request.version()));
  response->set_ready(manager_.GetModelVersion(request.name(), version).ok());
  return absl::OkStatus();
}

void MetadataHandlers::ServerMetadata(inference::ServerMetadataResponse* response) const {
  response->set_name(options_.server_name);
  response->set_version(options_.server_version);
  for (std::string_view extension : kServerExtensions) response->add_extensions(std::string(extension));
}

absl::Status MetadataHandlers::ModelMetadata(const inference::ModelMetadataRequest& request,
                                             inference::ModelMetadataResponse* response) const {
  ASSIGN_OR_RETURN(std::optional<int64_t> version, ParseModelVersion(request.version()));
  ASSIGN_OR_RETURN(std::shared_ptr<ModelVersion> model,
                   manager_.GetModelVersion(request.name(), version));
  const inference::ModelConfig& config = model->config();
  response->set_name(config.name());
  if (version) {
    response->add_versions(std::to_string(*version));
  } else {
    for (int64_t v : manager_.ReadyVersions(request.name()).value_or(std::vector<int64_t>{})) {
      response->add_versions(std::to_string(v));
    }
  }
  response->set_platform(PlatformName(config));
  AddTensorMetadata(config, config.input(), response->mutable_inputs());
  AddTensorMetadata(config, config.output(), response->mutable_outputs());
  return absl::OkStatus();
}

absl::Status MetadataHandlers::ModelConfig(const inference::ModelConfigRequest& request,
                                           inference::ModelConfigResponse* response) const {
  ASSIGN_OR_RETURN(std::optional<int64_t> version, ParseModelVersion(request.version()));
  ASSIGN_OR_RETURN(std::shared_ptr<ModelVersion> model,
                   manager_.GetModelVersion(request.name(), version));
  *response->mutable_config() = model->config();
  return absl::OkStatus();
}

absl::Status MetadataHandlers::ModelStatistics(const inference::ModelStatisticsRequest& request,
                                               inference::ModelStatisticsResponse* response) const {
  ASSIGN_OR_RETURN(std::optional<int64_t> version, ParseModelVersion(request.version()));
  ASSIGN_OR_RETURN(auto models, manager_.VersionsForStatistics(request.name(), version));
  for (const auto& model : models) ToStatisticsMessage(*model, response->add_model_stats());
  return absl::OkStatus();
}

void MetadataHandlers::RepositoryIndex(const inference::RepositoryIndexRequest& request,
                                       inference::RepositoryIndexResponse* response) const {
  for (const ModelIndexEntry& entry : manager_.Index()) {
    if (request.ready() && entry.state != ModelState::kReady) continue;
    auto* model = response->add_models();
    model->set_name(entry.name);
    if (entry.version) model->set_version(std::to_string(*entry.version));
    const std::string_view state = ModelStateName(entry.state);
    model->set_state(state.data(), state.size());
    model->set_reason(entry.reason);
  }
}

}  // namespace infera
