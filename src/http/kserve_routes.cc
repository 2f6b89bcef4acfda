#include "http/kserve_routes.h"

#include <charconv>
#include <chrono>

#include "codec/generate_request.h"
#include "codec/kserve_http_codec.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "http/http_status.h"
#include "http/infer_responders.h"
#include "http/kserve_extension_routes.h"
#include "http/proto_json.h"
#include "http/url_path.h"
#include "manager/model_version.h"
#include "protocol/model_answers.h"
#include "security/api_key_meter.h"

namespace infera {
namespace {

HttpResponse MethodNotAllowed(std::string_view allowed) {
  HttpResponse response = ErrorResponse(405, StrCat("method not allowed; use ", allowed));
  response.headers.emplace_back("Allow", std::string(allowed));
  return response;
}

}  // namespace

// /v2/models/{name}[/versions/{version}][/{action}]
struct KServeRoutes::ModelPath {
  std::string name;
  std::optional<int64_t> version;
  std::string_view action;  // "", "ready", "infer", "generate", "generate_stream", "config", "stats"
};

namespace {

std::string HttpStatusValue(const absl::Status& status) { return std::to_string(HttpStatusCode(status.code())); }

}  // namespace

KServeRoutes::KServeRoutes(ModelManager& manager, Options options)
    : manager_(manager),
      options_(std::move(options)),
      pipeline_(manager_, InferPipeline::Options{{"http", "http.status_code", &HttpStatusValue},
                                                 options_.trace,
                                                 options_.shared_memory}) {}

void KServeRoutes::Handle(HttpRequest&& request, HttpResponder responder) const {
  const PathSegments parts = SplitPathInline(request.path());
  const bool get = request.method == "GET";
  if (parts.empty() || parts[0] != "v2") {
    return std::move(responder).Send(ErrorResponse(404, StrCat("no route for ", request.path())));
  }
  if (parts.size() == 1) {
    if (!get) return std::move(responder).Send(MethodNotAllowed("GET"));
    return std::move(responder).Send(ServerMetadata());
  }
  if (parts[1] == "health" && parts.size() == 3 && (parts[2] == "live" || parts[2] == "ready")) {
    if (!get) return std::move(responder).Send(MethodNotAllowed("GET"));
    const bool ok = parts[2] == "live" || (options_.server_ready && options_.server_ready());
    return std::move(responder).Send(ok ? HttpResponse{200, "application/json", "", {}}
                                        : ErrorResponse(400, "server is not ready"));
  }
  // /v2/repository/* (index included) is RepositoryRoutes', behind the admin guard.
  if (parts.size() == 3 && parts[1] == "models" && parts[2] == "stats") {
    if (!get) return std::move(responder).Send(MethodNotAllowed("GET"));
    return std::move(responder).Send(ModelStatisticsResponse(manager_, "", std::nullopt));
  }
  if (parts[1] == "models" && parts.size() >= 3) {
    ModelPath path;
    std::optional<std::string> name = PercentDecode(parts[2]);
    if (!name) {
      return std::move(responder).Send(ErrorResponse(400, "malformed percent-escape in model name"));
    }
    path.name = std::move(*name);
    size_t next = 3;
    if (parts.size() >= 5 && parts[3] == "versions") {
      int64_t version = 0;
      auto [end, ec] = std::from_chars(parts[4].data(), parts[4].data() + parts[4].size(), version);
      if (ec != std::errc() || end != parts[4].data() + parts[4].size() || version < 1) {
        return std::move(responder).Send(ErrorResponse(
            400, StrCat("invalid model version '", parts[4], "' (versions are integers >= 1)")));
      }
      path.version = version;
      next = 5;
    }
    if (parts.size() == next || parts.size() == next + 1) {
      path.action = parts.size() == next ? std::string_view() : parts[next];
      return HandleModel(path, request, std::move(responder));
    }
  }
  std::move(responder).Send(ErrorResponse(404, StrCat("no route for ", request.path())));
}

void KServeRoutes::HandleModel(const ModelPath& path, HttpRequest& request,
                               HttpResponder responder) const {
  if (path.action.empty() || path.action == "ready") {
    if (request.method != "GET") return std::move(responder).Send(MethodNotAllowed("GET"));
    return std::move(responder).Send(path.action.empty() ? ModelMetadata(path) : ModelReady(path));
  }
  if (path.action == "config" || path.action == "stats") {
    if (request.method != "GET") return std::move(responder).Send(MethodNotAllowed("GET"));
    return std::move(responder).Send(
        path.action == "config" ? ModelConfigResponse(manager_, path.name, path.version)
                                : ModelStatisticsResponse(manager_, path.name, path.version));
  }
  if (path.action == "infer") {
    if (request.method != "POST") return std::move(responder).Send(MethodNotAllowed("POST"));
    return Infer(path, request, std::move(responder));
  }
  if (path.action == "generate" || path.action == "generate_stream") {
    if (request.method != "POST") return std::move(responder).Send(MethodNotAllowed("POST"));
    return Generate(path, request, std::move(responder), path.action == "generate_stream");
  }
  std::move(responder).Send(ErrorResponse(404, StrCat("no route for ", request.path())));
}

HttpResponse KServeRoutes::ServerMetadata() const {
  // The same message gRPC ServerMetadata answers (protocol/model_answers.h).
  inference::ServerMetadataResponse response;
  BuildServerMetadata(options_.server_name, options_.server_version, &response);
  return HttpResponse{200, "application/json", ProtoToJson(response), {}};
}

HttpResponse KServeRoutes::ModelMetadata(const ModelPath& path) const {
  inference::ModelMetadataResponse response;
  if (absl::Status built = BuildModelMetadata(manager_, path.name, path.version, &response); !built.ok()) {
    return ErrorResponse(built);
  }
  return HttpResponse{200, "application/json", ProtoToJson(response), {}};
}

HttpResponse KServeRoutes::ModelReady(const ModelPath& path) const {
  auto model = manager_.GetModelVersion(path.name, path.version);
  if (model.ok()) return HttpResponse{200, "application/json", "", {}};
  // Known but not ready is a "false" answer (KServe: 4xx); unknown stays 404.
  if (model.status().code() == absl::StatusCode::kUnavailable) {
    return ErrorResponse(400, std::string_view(model.status().message().data(),
                                               model.status().message().size()));
  }
  return ErrorResponse(model.status());
}

InferTarget KServeRoutes::Target(const ModelPath& path, const HttpRequest& request,
                                 std::shared_ptr<const CancellationToken> cancellation) const {
  InferTarget target;
  target.model_name = path.name;
  target.model_version = path.version;
  target.traceparent = request.Header("traceparent");
  target.routing_header = request.Header("x-routing-key");
  target.received = request.received_time;
  target.cancellation = std::move(cancellation);
  target.token_meter = ApiKeyTokenMeter(request.api_key);
  return target;
}

void KServeRoutes::Infer(const ModelPath& path, HttpRequest& request, HttpResponder responder) const {
  auto answer = std::make_unique<KServeInferResponder>(std::move(responder), path.name, request.received_time);
  const InferTarget target = Target(path, request, answer->cancellation());
  const size_t max_elements = options_.max_input_elements;
  // HTTP's decoder: JSON (+ binary tensors) in place in the connection's body buffer, or a
  // raw binary body (Inference-Header-Content-Length: 0), whose decoding needs the model's
  // config: its version is chosen first, routed by X-Routing-Key alone (no parameters).
  auto decode = [&request, max_elements](VersionResolver& resolver) -> absl::StatusOr<InferRequest> {
    std::optional<size_t> header_length;
    if (auto value = request.Header("inference-header-content-length")) {
      size_t parsed = 0;
      auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
      if (ec != std::errc() || end != value->data() + value->size()) {
        return absl::InvalidArgumentError(
            StrCat("Inference-Header-Content-Length '", *value, "' is not a byte count"));
      }
      header_length = parsed;
    }
    if (header_length != 0) return DecodeInferRequestInPlace(&request.body, header_length, max_elements);
    const std::string key =
        resolver.needs_routing_key() ? RoutingKey(Parameters{}, resolver.routing_header()) : std::string();
    ASSIGN_OR_RETURN(const ModelVersion* version, resolver.Resolve(key));
    return DecodeRawInferRequest(std::move(request.body), version->config(), max_elements);
  };
  pipeline_.Run(target, decode, std::move(answer));
}

void KServeRoutes::Generate(const ModelPath& path, HttpRequest& request, HttpResponder responder,
                            bool stream) const {
  std::unique_ptr<HttpInferResponder> answer;
  if (stream) {
    answer = std::make_unique<GenerateStreamResponder>(std::move(responder), path.name, request.received_time);
  } else {
    answer = std::make_unique<GenerateResponder>(std::move(responder), path.name, request.received_time);
  }
  const InferTarget target = Target(path, request, answer->cancellation());
  const size_t max_elements = options_.max_input_elements;
  // Generate's decoder: the body's keys map to the model's inputs by name, so the version
  // (routed by the body's routing_key or X-Routing-Key) is chosen once the JSON is read.
  auto decode = [&request, max_elements](VersionResolver& resolver) -> absl::StatusOr<InferRequest> {
    ASSIGN_OR_RETURN(GenerateRequestBody body, GenerateRequestBody::Parse(request.body));
    const std::string key = resolver.needs_routing_key()
                                ? RoutingKey(body.routing_parameters(), resolver.routing_header())
                                : std::string();
    ASSIGN_OR_RETURN(const ModelVersion* version, resolver.Resolve(key));
    return body.ToInferRequest(version->config(), max_elements);
  };
  pipeline_.Run(target, decode, std::move(answer));
}

}  // namespace infera
