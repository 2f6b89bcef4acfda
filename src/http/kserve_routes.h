// KServe v2 (Open Inference Protocol) REST endpoints.
//
//   GET  /v2/health/live                               200 while the process serves
//   GET  /v2/health/ready                              200 when the server is ready (every
//                                                      model, unless --strict-readiness=false)
//   GET  /v2                                           server metadata
//   GET  /v2/models/{m}[/versions/{v}]                 model metadata
//   GET  /v2/models/{m}[/versions/{v}]/ready           200 ready, 400 not ready
//   POST /v2/models/{m}[/versions/{v}]/infer           inference (JSON or binary tensors)
//   POST /v2/models/{m}[/versions/{v}]/generate        Triton's generate extension: one
//                                                      JSON object (codec/generate_*.h)
//   POST /v2/models/{m}[/versions/{v}]/generate_stream the same as Server-Sent Events, one
//                                                      per response of a decoupled model
//   GET  /v2/models/{m}[/versions/{v}]/config          Triton extensions, rendered by
//   GET  /v2/models[/{m}[/versions/{v}]]/stats         kserve_extension_routes.h
//
// Server and model metadata are the messages gRPC answers (protocol/model_answers.h),
// rendered as JSON (http/proto_json.h). Inference (infer, generate, generate_stream) runs
// the one InferPipeline of both transports (protocol/infer_pipeline.h: lookup, decode,
// shared memory, canary routing by the `routing_key` parameter or X-Routing-Key, tracing,
// the error order) with HTTP's decoders and responders (http/infer_responders.h); no model
// logic lives here. Errors are {"error": "..."} with the status from http_status.h;
// unknown paths are 404, wrong methods 405. A gzip / deflate body arrives here already
// inflated (the session does it for every route: content_coding.h), so
// Inference-Header-Content-Length counts inflated bytes, as in Triton.
//
// Thread-safe: Handle() runs concurrently on every I/O thread.
#ifndef INFERA_HTTP_KSERVE_ROUTES_H_
#define INFERA_HTTP_KSERVE_ROUTES_H_

#include <functional>
#include <string>

#include "http/http_server.h"
#include "manager/model_manager.h"
#include "protocol/infer_pipeline.h"
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
    // Whether the server as a whole is ready (Server::IsReady: started, not draining, and
    // under --strict-readiness every model ready).
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
  void HandleModel(const ModelPath& path, HttpRequest& request, HttpResponder responder) const;
  HttpResponse ServerMetadata() const;
  HttpResponse ModelMetadata(const ModelPath& path) const;
  HttpResponse ModelReady(const ModelPath& path) const;
  void Infer(const ModelPath& path, HttpRequest& request, HttpResponder responder) const;
  // generate (`stream` false) and generate_stream.
  void Generate(const ModelPath& path, HttpRequest& request, HttpResponder responder, bool stream) const;
  // What the pipeline needs to know of `request` before decoding it.
  InferTarget Target(const ModelPath& path, const HttpRequest& request,
                     std::shared_ptr<const CancellationToken> cancellation) const;

  ModelManager& manager_;
  const Options options_;
  const InferPipeline pipeline_;
};

}  // namespace infera

#endif  // INFERA_HTTP_KSERVE_ROUTES_H_
