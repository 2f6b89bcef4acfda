// The HTTP transport's InferResponders (protocol/infer_pipeline.h): how an inference's
// answers leave over HTTP.
//
//   KServeInferResponder     POST .../infer: the KServe v2 JSON (or JSON + binary tensors)
//                            body, one response (a decoupled model's only one)
//   GenerateResponder        POST .../generate: Triton's generate JSON object, one response
//   GenerateStreamResponder  POST .../generate_stream: one Server-Sent Event per response
//                            ("data: {...}\n\n"), as the model sends them; an error before
//                            the first response is a plain JSON error with its status, an
//                            error after it is the event "data: {"error": "..."}" and the
//                            end of the stream (Triton's generate_stream). A decoupled
//                            model's empty final response sends nothing; it ends the stream.
//
// Each adds the request's `traceparent` header when it is traced, logs a verbose line
// per request, and records its write time in the version's frontend stages (unary).
//
// Thread-compatible: the pipeline calls one responder serially (possibly from different
// threads over time).
#ifndef INFERA_HTTP_INFER_RESPONDERS_H_
#define INFERA_HTTP_INFER_RESPONDERS_H_

#include <optional>
#include <string>
#include <string_view>

#include "codec/output_encoding.h"
#include "codec/response_encoder.h"
#include "common/clock.h"
#include "http/http_server.h"
#include "protocol/infer_pipeline.h"

namespace infera {

// What every HTTP responder needs: the connection's responder and the request's facts
// for the verbose log.
class HttpInferResponder : public InferResponder {
 public:
  // `route` names the endpoint in the verbose log ("infer", "generate", ...).
  HttpInferResponder(HttpResponder responder, std::string_view route, std::string_view model, SteadyTime received);
  const std::shared_ptr<const CancellationToken>& cancellation() const { return responder_.cancellation(); }

 protected:
  // Sends a whole response (unary answers and errors before a stream starts).
  void SendWhole(HttpResponse response, const InferSend& send);
  void LogVerbose(int status, const InferSend& send) const;

  HttpResponder responder_;
  std::string_view route_;  // static
  std::string model_;
  SteadyTime received_;
};

class KServeInferResponder final : public HttpInferResponder {
 public:
  KServeInferResponder(HttpResponder responder, std::string_view model, SteadyTime received);
  void Prepare(const InferRequest& request) override { encoding_ = OutputEncoding::FromRequest(request); }
  absl::Status Encode(InferResponse& response, bool final) override;
  void Send(const absl::Status& status, const InferSend& send) override;

 private:
  OutputEncoding encoding_;
  EncodedInferResponse encoded_;  // in the connection's recycled body buffer
};

class GenerateResponder final : public HttpInferResponder {
 public:
  GenerateResponder(HttpResponder responder, std::string_view model, SteadyTime received);
  absl::Status Encode(InferResponse& response, bool final) override;
  void Send(const absl::Status& status, const InferSend& send) override;

 private:
  std::string body_;
};

class GenerateStreamResponder final : public HttpInferResponder {
 public:
  GenerateStreamResponder(HttpResponder responder, std::string_view model, SteadyTime received);
  bool streams() const override { return true; }
  absl::Status Encode(InferResponse& response, bool final) override;
  void Send(const absl::Status& status, const InferSend& send) override;

 private:
  // Starts the event stream (status 200) with `first` as its first chunk.
  void Start(std::string first, const InferSend& send);

  std::string events_;  // what Encode prepared: zero or one event
  std::optional<HttpStream> stream_;
  int responses_ = 0;
};

}  // namespace infera

#endif  // INFERA_HTTP_INFER_RESPONDERS_H_
