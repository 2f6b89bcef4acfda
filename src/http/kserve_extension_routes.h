// Triton's KServe v2 extensions over HTTP, with Triton's JSON shapes. Each answer is the
// message gRPC returns (protocol/model_answers.h, the one source), rendered as JSON by
// ProtoToJson (the index by hand: Triton's HTTP index is a bare array):
//
//   GET  /v2/models/{m}[/versions/{v}]/config     model_configuration: the config as JSON
//                                                 (see proto_json.h)
//   GET  /v2/models[/{m}[/versions/{v}]]/stats    statistics:
//        {"model_stats": [{"name", "version", "last_inference", "inference_count",
//          "execution_count", "inference_stats": {"success", "fail", "queue",
//          "compute_input", "compute_infer", "compute_output", "cache_hit", "cache_miss"},
//          "batch_stats": [{"batch_size", "compute_input", "compute_infer",
//          "compute_output"}]}]}                  every duration {"count": N, "ns": N}
//        no model: every ready version of every model; no version: every ready version
//   POST /v2/repository/index  {"ready": bool}?  model_repository index:
//        [{"name", "version", "state", "reason"}]  ("version" absent when the model failed
//        before its versions were known)
//
// Counts and nanoseconds are JSON integers, exactly ModelStatistics::Snapshot()'s.
// Errors are ErrorResponse(status): unknown model or version 404, not ready 503, a bad
// index body 400.
//
// Thread-safe (the manager is).
#ifndef INFERA_HTTP_KSERVE_EXTENSION_ROUTES_H_
#define INFERA_HTTP_KSERVE_EXTENSION_ROUTES_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "http/http_message.h"
#include "manager/model_manager.h"
#include "security/api_key_store.h"

namespace infera {

HttpResponse ModelConfigResponse(const ModelManager& manager, std::string_view name,
                                 std::optional<int64_t> version);

// `name` empty: every model (then `version` must be unset).
HttpResponse ModelStatisticsResponse(const ModelManager& manager, std::string_view name,
                                     std::optional<int64_t> version);

// `body`: empty, or {"ready": true|false}. `key`: the request's API key (null: keys off):
// only its models are listed.
HttpResponse RepositoryIndexResponse(const ModelManager& manager, std::string_view body,
                                     const ApiKeyGrantPtr& key = nullptr);

}  // namespace infera

#endif  // INFERA_HTTP_KSERVE_EXTENSION_ROUTES_H_
