#include "http/kserve_routes.h"

#include <charconv>
#include <chrono>

#include "codec/kserve_http_codec.h"
#include "common/logging.h"
#include "common/str_cat.h"
#include "http/http_status.h"
#include "http/kserve_extension_routes.h"
#include "http/url_path.h"
#include "manager/single_response.h"
#include "http/proto_json.h"
#include "protocol/model_answers.h"

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
  std::string_view action;  // "", "ready", "infer", "config", "stats"
};

KServeRoutes::KServeRoutes(ModelManager& manager, Options options)
    : manager_(manager), options_(std::move(options)) {}

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

void KServeRoutes::Infer(const ModelPath& path, HttpRequest& request,
                         HttpResponder responder) const {
  // One lookup (ModelManager::ChooseVersion): an unknown model fails here, before the
  // tensors are read; any other lookup error is answered after decoding, as a canary
  // split is routed then (by the request's routing_key parameter or X-Routing-Key).
  absl::StatusOr<VersionChoice> choice = manager_.ChooseVersion(path.name, path.version);
  if (!choice.ok()) return std::move(responder).Send(ErrorResponse(choice.status()));

  std::optional<size_t> header_length;
  if (auto value = request.Header("inference-header-content-length")) {
    size_t parsed = 0;
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
    if (ec != std::errc() || end != value->data() + value->size()) {
      return std::move(responder).Send(ErrorResponse(
          400, StrCat("Inference-Header-Content-Length '", *value, "' is not a byte count")));
    }
    header_length = parsed;
  }
  if (auto encoding = request.Header("content-encoding")) {
    if (*encoding != "identity") {
      return std::move(responder).Send(ErrorResponse(
          415, StrCat("Content-Encoding '", *encoding, "' is not supported; send identity")));
    }
  }
  InferCompletion completion{std::move(responder), {},
                             InferTrace::Start(options_.trace, path.name, request.Header("traceparent"),
                                               request.received_time),
                             request.received_time, path.name, "", {}, nullptr, {}};
  completion.body_buffer = completion.responder.TakeBodyBuffer();
  // A raw binary request (Inference-Header-Content-Length: 0) is the single input's bytes;
  // decoding it needs the model's config, so its version is chosen first (routed by
  // X-Routing-Key alone: the request has no parameters).
  ModelHandle raw_model;
  absl::StatusOr<InferRequest> decoded;  // set below (a default StatusOr costs no allocation)
  const auto decode_start = std::chrono::steady_clock::now();
  if (header_length == 0) {
    const std::string key =
        choice->needs_routing_key() ? RoutingKey(Parameters{}, request.Header("x-routing-key")) : std::string();
    auto version = std::move(*choice).Resolve(key);
    if (!version.ok()) return std::move(completion).Finish(version.status(), nullptr);
    raw_model = std::move(*version);
    decoded = DecodeRawInferRequest(std::move(request.body), raw_model->config(),
                                    options_.max_input_elements);
  } else {
    decoded = DecodeInferRequestInPlace(&request.body, header_length, options_.max_input_elements);
  }
  const auto decode_end = std::chrono::steady_clock::now();
  if (!decoded.ok()) return std::move(completion).Finish(decoded.status(), nullptr);
  if (completion.trace) completion.trace->Parsed(decode_end);
  InferRequest& infer = *decoded;
  auto shared_memory = BindSharedMemory(options_.shared_memory, infer);
  if (!shared_memory.ok()) return std::move(completion).Finish(shared_memory.status(), nullptr);
  completion.shared_memory_outputs = *std::move(shared_memory);
  // The canary split routes by the request's routing_key parameter or X-Routing-Key.
  // (A key is built only for a pending canary split.)
  const std::string key = !raw_model && choice->needs_routing_key()
                              ? RoutingKey(infer.parameters, request.Header("x-routing-key"))
                              : std::string();
  absl::StatusOr<ModelHandle> model =
      raw_model ? absl::StatusOr<ModelHandle>(std::move(raw_model)) : std::move(*choice).Resolve(key);
  if (!model.ok()) return std::move(completion).Finish(model.status(), nullptr);
  (*model)->statistics().RecordDecode(
      static_cast<uint64_t>(std::chrono::nanoseconds(decode_end - decode_start).count()));
  completion.stages = (*model)->statistics().frontend_stages();
  infer.model_name = path.name;
  infer.model_version = path.version;
  infer.arrival_time = request.received_time;
  infer.cancellation = completion.responder.cancellation();
  completion.encoding = OutputEncoding::FromRequest(infer);
  completion.request_id = infer.id;
  InferCallback done = [completion = std::move(completion)](absl::StatusOr<InferResponse> result,
                                                             ResponseDelivery delivery) mutable {
    std::move(completion).Finish(std::move(result), delivery.batch);
  };
  // A decoupled model (an LLM) answers a unary infer with exactly one response.
  if ((*model)->decoupled()) done = SingleResponse(path.name, std::move(done));
  (*model)->Infer(std::move(infer), std::move(done));
}

void KServeRoutes::InferCompletion::Finish(absl::StatusOr<InferResponse> result, CompletionBatch* batch) && {
  HttpResponse response;
  if (result.ok()) {
    if (absl::Status written = shared_memory_outputs.WriteInto(*result); !written.ok()) {
      result = std::move(written);
    }
  }
  if (!result.ok()) {
    response = ErrorResponse(result.status());
  } else {
    const auto encode_start = std::chrono::steady_clock::now();
    EncodedInferResponse encoded{std::move(body_buffer), std::nullopt};
    if (absl::Status status = EncodeInferResponse(*result, encoding, &encoded); !status.ok()) {
      response = ErrorResponse(status);
    } else {
      response.body = std::move(encoded.body);
      if (encoded.json_header_length) {
        response.content_type = "application/octet-stream";
        response.headers.emplace_back("Inference-Header-Content-Length",
                                      std::to_string(*encoded.json_header_length));
      }
    }
    const auto encode_end = std::chrono::steady_clock::now();
    if (stages) {
      stages->RecordEncode(static_cast<uint64_t>(std::chrono::nanoseconds(encode_end - encode_start).count()));
    }
    if (trace) {
      trace->Ran(result->timings);
      trace->Serialized(encode_start, encode_end);
    }
  }
  // The end time only for the trace and the verbose log line (one clock read less per
  // request otherwise).
  const bool verbose = LogEnabled(LogLevel::kVerbose);
  const auto end = trace || verbose ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  std::string trace_id;
  if (trace) {
    trace_id = trace->trace_id();
    response.headers.emplace_back("traceparent", trace->traceparent());
    std::optional<std::string> error;
    if (response.status >= 400) error = std::string(result.ok() ? "encoding failed" : result.status().message());
    std::move(*trace).Finish("http", request_id, "http.status_code", std::to_string(response.status),
                             std::move(error), end);
  }
  if (verbose) {
    INFERA_LOG(VERBOSE) << "infer model=" << model_name << " id=" << request_id
                        << " status=" << response.status << " ms="
                        << std::chrono::duration<double, std::milli>(end - received_time).count()
                        << (trace_id.empty() ? "" : " trace_id=") << trace_id;
  }
  if (!stages) return std::move(responder).Send(std::move(response), nullptr, batch);
  std::move(responder).Send(
      std::move(response),
      [stages = std::move(stages)](std::chrono::nanoseconds write_time, bool completed) {
        stages->RecordWrite(static_cast<uint64_t>(write_time.count()), completed);
      },
      batch);
}

}  // namespace infera
