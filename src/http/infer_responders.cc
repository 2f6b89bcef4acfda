#include "http/infer_responders.h"

#include <chrono>
#include <utility>

#include "codec/generate_response.h"
#include "common/logging.h"
#include "http/http_status.h"

namespace infera {

HttpInferResponder::HttpInferResponder(HttpResponder responder, std::string_view route, std::string_view model,
                                       SteadyTime received)
    : responder_(std::move(responder)), route_(route), model_(model), received_(received) {}

void HttpInferResponder::LogVerbose(int status, const InferSend& send) const {
  if (!LogEnabled(LogLevel::kVerbose)) return;
  const auto end = std::chrono::steady_clock::now();
  INFERA_LOG(VERBOSE) << route_ << " model=" << model_ << " id=" << send.request_id << " status=" << status
                      << " ms=" << std::chrono::duration<double, std::milli>(end - received_).count()
                      << (send.trace_id.empty() ? "" : " trace_id=") << send.trace_id;
}

void HttpInferResponder::SendWhole(HttpResponse response, const InferSend& send) {
  if (!send.traceparent.empty()) response.headers.emplace_back("traceparent", std::string(send.traceparent));
  LogVerbose(response.status, send);
  if (send.stages == nullptr || *send.stages == nullptr) {
    return std::move(responder_).Send(std::move(response), nullptr, send.batch);
  }
  std::move(responder_).Send(
      std::move(response),
      [stages = *send.stages](std::chrono::nanoseconds write_time, bool completed) {
        stages->RecordWrite(static_cast<uint64_t>(write_time.count()), completed);
      },
      send.batch);
}

KServeInferResponder::KServeInferResponder(HttpResponder responder, std::string_view model, SteadyTime received)
    : HttpInferResponder(std::move(responder), "infer", model, received) {
  encoded_.body = responder_.TakeBodyBuffer();
}

absl::Status KServeInferResponder::Encode(InferResponse& response, bool /*final*/) {
  return EncodeInferResponse(response, encoding_, &encoded_);
}

void KServeInferResponder::Send(const absl::Status& status, const InferSend& send) {
  if (!status.ok()) return SendWhole(ErrorResponse(status), send);
  HttpResponse response;
  response.body = std::move(encoded_.body);
  if (encoded_.json_header_length) {
    response.content_type = "application/octet-stream";
    response.headers.emplace_back("Inference-Header-Content-Length", std::to_string(*encoded_.json_header_length));
  }
  SendWhole(std::move(response), send);
}

GenerateResponder::GenerateResponder(HttpResponder responder, std::string_view model, SteadyTime received)
    : HttpInferResponder(std::move(responder), "generate", model, received) {}

absl::Status GenerateResponder::Encode(InferResponse& response, bool /*final*/) {
  return EncodeGenerateResponse(response, &body_);
}

void GenerateResponder::Send(const absl::Status& status, const InferSend& send) {
  if (!status.ok()) return SendWhole(ErrorResponse(status), send);
  SendWhole(HttpResponse{200, "application/json", std::move(body_), {}}, send);
}

GenerateStreamResponder::GenerateStreamResponder(HttpResponder responder, std::string_view model,
                                                 SteadyTime received)
    : HttpInferResponder(std::move(responder), "generate_stream", model, received) {}

absl::Status GenerateStreamResponder::Encode(InferResponse& response, bool final) {
  events_.clear();
  // A decoupled model's empty final response: the request ends, no event.
  if (final && response.outputs.empty()) return absl::OkStatus();
  return AppendGenerateEvent(response, &events_);
}

void GenerateStreamResponder::Start(std::string first, const InferSend& send) {
  HttpResponse head{200, "text/event-stream; charset=utf-8", std::move(first), {}};
  head.headers.emplace_back("Cache-Control", "no-cache");
  if (!send.traceparent.empty()) head.headers.emplace_back("traceparent", std::string(send.traceparent));
  stream_.emplace(std::move(responder_).StartStream(std::move(head)));
}

void GenerateStreamResponder::Send(const absl::Status& status, const InferSend& send) {
  if (!status.ok()) {
    // Before any event: an ordinary error answer with its status (Triton answers a request
    // that fails before inference this way). After: the error event ends the stream.
    if (!stream_) return SendWhole(ErrorResponse(status), send);
    stream_->Write(GenerateErrorEvent(std::string_view(status.message().data(), status.message().size())));
    std::move(*stream_).Finish();
    LogVerbose(HttpStatusCode(status.code()), send);
    return;
  }
  if (!events_.empty()) {
    ++responses_;
    if (!stream_) {
      Start(std::move(events_), send);
    } else {
      stream_->Write(std::move(events_));
    }
    events_.clear();
  }
  if (!send.final) return;
  if (!stream_) Start(std::string(), send);  // a request answered with no response: an empty stream
  std::move(*stream_).Finish();
  LogVerbose(200, send);
}

}  // namespace infera
