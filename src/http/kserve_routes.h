// KServe v2 (Open Inference Protocol) REST endpoints.
//
//   GET  /v2/health/live                               200 while the process serves
//   GET  /v2/health/ready                              200 when every model is ready
//   GET  /v2                                           server metadata
//   GET  /v2/models/{m}[/versions/{v}]                 model metadata
//   GET  /v2/models/{m}[/versions/{v}]/ready           200 ready, 400 not ready
//   POST /v2/models/{m}[/versions/{v}]/infer           inference (JSON or binary tensors)
//   GET  /v2/models/{m}[/versions/{v}]/config          Triton extensions, rendered by
//   GET  /v2/models[/{m}[/versions/{v}]]/stats         kserve_extension_routes.h
//
// Server and model metadata are the messages gRPC answers (protocol/model_answers.h),
// rendered as JSON (http/proto_json.h). Inference routes a canary by the request's
// `routing_key` parameter or X-Routing-Key, and is traced through InferTrace
// (tracing/infer_trace.h) — both shared with gRPC.
//
// The routes decode into transport-neutral InferRequests, call the model manager and
// encode what comes back; no model logic lives here. Errors are {"error": "..."} with
// the status from http_status.h; unknown paths are 404, wrong methods 405.
//
// Thread-safe: Handle() runs concurrently on every I/O thread.
#ifndef INFERA_HTTP_KSERVE_ROUTES_H_
#define INFERA_HTTP_KSERVE_ROUTES_H_

#include <functional>
#include <string>

#include "http/http_server.h"
#include "manager/model_manager.h"
#include "codec/output_encoding.h"
#include "shm/shared_memory_binding.h"
#include "tracing/infer_trace.h"

namespace infera {

class KServeRoutes {
 public:
  struct Options {
    std::string server_name = "infera";
    std::string server_version;
    // Upper bound on elements in one request's JSON tensors (hostile-input guard).
    size_t max_input_elements = 64 << 20;
    // Whether the server as a whole is ready (models loaded, not draining).
    std::function<bool()> server_ready;
    // Where sampled requests are traced (both null: tracing off; they outlive the
    // routes and their requests).
    InferTrace::Sink trace;
    // Regions that infer requests may name (shm/shared_memory_binding.h); null: none.
    // Not owned; outlives the routes and their requests.
    const SharedMemoryRegistry* shared_memory = nullptr;
  };

  KServeRoutes(ModelManager& manager, Options options);

  // Reads `request` in place (the HTTP server's per-connection storage); a JSON-only infer
  // body is decoded in it and keeps its capacity for the connection's next request.
  void Handle(HttpRequest&& request, HttpResponder responder) const;

 private:
  struct ModelPath;
  // Everything needed to answer an infer request once its result arrives (on a model
  // worker thread): encode, finish the trace, log, send.
  struct InferCompletion {
    HttpResponder responder;
    OutputEncoding encoding;
    std::optional<InferTrace> trace;
    std::chrono::steady_clock::time_point received_time;
    std::string model_name;
    std::string request_id;
    SharedMemoryOutputs shared_memory_outputs;  // outputs to write into regions
    // The serving version's frontend stage counters (null before it is resolved): they
    // get the encode and write times. Not the version itself, whose counted handle must
    // not be held while the request queues or its answer is written.
    std::shared_ptr<ModelStatistics::FrontendStages> stages;
    // The connection's recycled buffer the response body is encoded into.
    std::string body_buffer;
    // `batch`: the batch whose results are being delivered, or null (ResponseDelivery).
    void Finish(absl::StatusOr<InferResponse> result, CompletionBatch* batch) &&;
  };
  void HandleModel(const ModelPath& path, HttpRequest& request, HttpResponder responder) const;
  HttpResponse ServerMetadata() const;
  HttpResponse ModelMetadata(const ModelPath& path) const;
  HttpResponse ModelReady(const ModelPath& path) const;
  void Infer(const ModelPath& path, HttpRequest& request, HttpResponder responder) const;

  ModelManager& manager_;
  const Options options_;
};

}  // namespace infera

#endif  // INFERA_HTTP_KSERVE_ROUTES_H_
