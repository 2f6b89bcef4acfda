// The answers both transports give about the server and its models, built once as the
// KServe / Triton protobuf messages (grpc_service.proto). gRPC returns them as they are;
// HTTP renders them as JSON (http/proto_json.h, http/kserve_extension_routes.h), so the
// two can never drift apart.
//
//   BuildServerMetadata   name, version, kServerExtensions
//   BuildModelMetadata    versions (the one asked for, else every ready one), platform,
//                         inputs / outputs with KServe datatypes and client shapes
//   BuildModelConfig      the config the version serves with, plus the backend's
//                         load-time facts (LoadedModel::ReportedParameters) as read-only
//                         `parameters` entries (e.g. infera.precision.cosine)
//   BuildModelStatistics  name "" = every model (then no version), version unset =
//                         every ready version; integers as ModelStatistics::Snapshot()
//   BuildRepositoryIndex  every model (version) with its state and reason
//   BuildTraceSetting     the trace extension: applies the request's changes (if any) to
//                         the global settings or, with model_name, the model's (which must
//                         be known), and answers the settings in effect
//
// Errors are the manager's (Triton's wording, model_manager.h) or InvalidArgument for a
// bad request. Also here, because both transports need exactly the same rule:
//   CheckExplicitModelControl  whether load / unload may run at all
//   ParseConfigOverride   the JSON model config of a repository load ("config" parameter)
//   RoutingKey            the canary routing key of an inference
//
// Thread-safe (the manager and TraceSettings are).
#ifndef INFERA_PROTOCOL_MODEL_ANSWERS_H_
#define INFERA_PROTOCOL_MODEL_ANSWERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/parameters.h"
#include "grpc_service.pb.h"
#include "manager/model_manager.h"
#include "model_config.pb.h"
#include "tracing/trace_settings.h"

namespace infera {

void BuildServerMetadata(std::string_view name, std::string_view version,
                         inference::ServerMetadataResponse* response);

absl::Status BuildModelMetadata(const ModelManager& manager, std::string_view name,
                                std::optional<int64_t> version,
                                inference::ModelMetadataResponse* response);

absl::Status BuildModelConfig(const ModelManager& manager, std::string_view name,
                              std::optional<int64_t> version, inference::ModelConfigResponse* response);

absl::Status BuildModelStatistics(const ModelManager& manager, std::string_view name,
                                  std::optional<int64_t> version,
                                  inference::ModelStatisticsResponse* response);

void BuildRepositoryIndex(const ModelManager& manager, bool ready_only,
                          inference::RepositoryIndexResponse* response);

absl::Status BuildTraceSetting(const ModelManager& manager, TraceSettings& settings,
                               const inference::TraceSettingRequest& request,
                               inference::TraceSettingResponse* response);

// OK in explicit model control mode, else FailedPrecondition "explicit model load /
// unload is not allowed unless --model-control-mode=explicit" (Triton's leading text;
// gRPC FAILED_PRECONDITION, HTTP 409).
absl::Status CheckExplicitModelControl(const ModelManager& manager);

// `json`: an inference.ModelConfig as JSON (Triton's load override). `what` names it in
// errors ("parameters.config", "parameter 'config'"). InvalidArgument when it is over
// the JSON reader's limits or not a valid model config.
absl::StatusOr<inference::ModelConfig> ParseConfigOverride(std::string_view json, std::string_view what);

// The canary routing key: the request's `routing_key` parameter (string or integer),
// else the transport's X-Routing-Key header / x-routing-key metadata, else "".
std::string RoutingKey(const Parameters& parameters, std::optional<std::string_view> header);

}  // namespace infera

#endif  // INFERA_PROTOCOL_MODEL_ANSWERS_H_
