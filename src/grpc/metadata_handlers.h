// MetadataHandlers: the KServe v2 gRPC RPCs that are answered at once from the model
// manager — health, server and model metadata, and Triton's extensions ModelConfig,
// ModelStatistics, RepositoryIndex and TraceSetting. Inference is elsewhere
// (inference_service.h). The answers themselves are built by protocol/model_answers.h,
// the one source HTTP renders too; this class parses the gRPC request's version.
//
// Each handler fills its response message or returns a Status naming the problem
// (mapped to the RPC status by grpc_status.h):
//   - a model version is "" (the policy's) or an integer >= 1, else InvalidArgument;
//   - unknown model or version: NotFound; known but not ready: Unavailable;
//   - ModelReady answers ready=false, not an error, for an unknown or unready model (as
//     Triton does, so clients' is_model_ready() returns False instead of raising);
//   - ModelStatistics: name "" = every model, version "" = every ready version; integers
//     exactly as ModelStatistics::Snapshot() holds them (uint64 counts and nanoseconds,
//     last_inference in ms since the epoch, batch_stats only for sizes that ran).
//
// Thread-safe: const, and the manager is thread-safe.
//
// Usage:
//   MetadataHandlers handlers(manager, {"infera", "0.1.0", [&] { return server.IsReady(); }});
//   inference::ModelConfigResponse reply;
//   absl::Status status = handlers.ModelConfig(request, &reply);
#ifndef INFERA_GRPC_METADATA_HANDLERS_H_
#define INFERA_GRPC_METADATA_HANDLERS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "grpc_service.pb.h"
#include "manager/model_manager.h"
#include "tracing/trace_settings.h"

namespace infera {

class MetadataHandlers {
 public:
  struct Options {
    std::string server_name = "infera";
    std::string server_version;
    // Whether the server as a whole is ready (models loaded, not draining).
    std::function<bool()> server_ready;
    // The trace extension's settings (outlive the handlers); null: TraceSetting is
    // UNIMPLEMENTED.
    TraceSettings* trace_settings = nullptr;
  };

  MetadataHandlers(const ModelManager& manager, Options options);

  bool ServerReady() const;
  absl::Status ModelReady(const inference::ModelReadyRequest& request,
                          inference::ModelReadyResponse* response) const;
  void ServerMetadata(inference::ServerMetadataResponse* response) const;
  absl::Status ModelMetadata(const inference::ModelMetadataRequest& request,
                             inference::ModelMetadataResponse* response) const;
  absl::Status ModelConfig(const inference::ModelConfigRequest& request,
                           inference::ModelConfigResponse* response) const;
  absl::Status ModelStatistics(const inference::ModelStatisticsRequest& request,
                               inference::ModelStatisticsResponse* response) const;
  void RepositoryIndex(const inference::RepositoryIndexRequest& request,
                       inference::RepositoryIndexResponse* response) const;
  absl::Status TraceSetting(const inference::TraceSettingRequest& request,
                            inference::TraceSettingResponse* response) const;

 private:
  const ModelManager& manager_;
  const Options options_;
};

}  // namespace infera

#endif  // INFERA_GRPC_METADATA_HANDLERS_H_
