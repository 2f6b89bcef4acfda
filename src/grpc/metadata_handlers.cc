#include "grpc/metadata_handlers.h"

#include "common/status.h"
#include "grpc/infer_message_codec.h"
#include "protocol/model_answers.h"

namespace infera {

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
  BuildServerMetadata(options_.server_name, options_.server_version, response);
}

absl::Status MetadataHandlers::ModelMetadata(const inference::ModelMetadataRequest& request,
                                             inference::ModelMetadataResponse* response) const {
  ASSIGN_OR_RETURN(std::optional<int64_t> version, ParseModelVersion(request.version()));
  return BuildModelMetadata(manager_, request.name(), version, response);
}

absl::Status MetadataHandlers::ModelConfig(const inference::ModelConfigRequest& request,
                                           inference::ModelConfigResponse* response) const {
  ASSIGN_OR_RETURN(std::optional<int64_t> version, ParseModelVersion(request.version()));
  return BuildModelConfig(manager_, request.name(), version, response);
}

absl::Status MetadataHandlers::ModelStatistics(const inference::ModelStatisticsRequest& request,
                                               inference::ModelStatisticsResponse* response) const {
  ASSIGN_OR_RETURN(std::optional<int64_t> version, ParseModelVersion(request.version()));
  return BuildModelStatistics(manager_, request.name(), version, response);
}

void MetadataHandlers::RepositoryIndex(const inference::RepositoryIndexRequest& request,
                                       inference::RepositoryIndexResponse* response) const {
  BuildRepositoryIndex(manager_, request.ready(), response);
}

absl::Status MetadataHandlers::TraceSetting(const inference::TraceSettingRequest& request,
                                            inference::TraceSettingResponse* response) const {
  if (options_.trace_settings == nullptr) {
    return absl::UnimplementedError("trace settings are not available on this server");
  }
  return BuildTraceSetting(manager_, *options_.trace_settings, request, response);
}

}  // namespace infera
