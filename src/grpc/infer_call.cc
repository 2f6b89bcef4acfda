#include "grpc/infer_call.h"

#include <utility>

#include "common/str_cat.h"
#include "grpc/infer_message_codec.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace infera {
namespace {

std::string GrpcStatusValue(const absl::Status& status) { return std::to_string(static_cast<int>(status.code())); }

InferPipeline Pipeline(const ModelManager& manager, const InferCallOptions& options) {
  return InferPipeline(manager, InferPipeline::Options{{"grpc", "rpc.grpc.status_code", &GrpcStatusValue},
                                                       options.trace,
                                                       options.shared_memory});
}

InferTarget Target(const inference::ModelInferRequest& message, const InferCallMetadata& metadata,
                   std::shared_ptr<const CancellationToken> cancellation) {
  InferTarget target;
  target.model_name = message.model_name();
  target.model_version = ParseModelVersion(message.model_version());
  if (metadata.traceparent) target.traceparent = *metadata.traceparent;
  if (metadata.routing_key) target.routing_header = *metadata.routing_key;
  target.received = std::chrono::steady_clock::now();
  target.cancellation = std::move(cancellation);
  target.token_meter = metadata.token_meter;
  return target;
}

// A unary call's one answer, serialised as a ModelInferResponse.
class UnaryInferResponder final : public InferResponder {
 public:
  UnaryInferResponder(uint64_t max_bytes, absl::AnyInvocable<void(InferCallResult) &&> done)
      : max_bytes_(max_bytes), done_(std::move(done)) {}

  absl::Status Encode(InferResponse& response, bool /*final*/) override {
    absl::StatusOr<grpc::ByteBuffer> serialized = SerializeInferResponse(response, ResponseFraming::kUnary, max_bytes_);
    if (!serialized.ok()) return serialized.status();
    message_ = *std::move(serialized);
    return absl::OkStatus();
  }
  void Send(const absl::Status& status, const InferSend& send) override {
    InferCallResult result;
    result.status = status;
    if (status.ok()) result.message = std::move(message_);
    result.traceparent.assign(send.traceparent.data(), send.traceparent.size());
    std::move(done_)(std::move(result));
  }

 private:
  const uint64_t max_bytes_;
  absl::AnyInvocable<void(InferCallResult) &&> done_;
  grpc::ByteBuffer message_;
};

// A stream request's answers, each a ModelStreamInferResponse (see infer_call.h).
class StreamInferResponder final : public InferResponder {
 public:
  StreamInferResponder(uint64_t max_bytes, std::shared_ptr<const inference::ModelInferRequest> message,
                       absl::AnyInvocable<void(StreamAnswer)> answer)
      : max_bytes_(max_bytes), message_(std::move(message)), answer_(std::move(answer)) {}

  bool streams() const override { return true; }
  void set_send_empty_final(bool send) { send_empty_final_ = send; }

  absl::Status Encode(InferResponse& response, bool final) override {
    encoded_.reset();
    if (final && response.outputs.empty() && !send_empty_final_) return absl::OkStatus();
    response.parameters[kFinalResponseParameter] = final;
    absl::StatusOr<grpc::ByteBuffer> serialized = SerializeInferResponse(response, ResponseFraming::kStream, max_bytes_);
    if (!serialized.ok()) return serialized.status();
    encoded_ = *std::move(serialized);
    return absl::OkStatus();
  }
  void Send(const absl::Status& status, const InferSend& send) override {
    StreamAnswer answer;
    answer.final = send.final;
    if (!status.ok()) {
      answer.message = StreamErrorAnswer(*message_, status);
    } else {
      answer.message = std::move(encoded_);
    }
    encoded_.reset();
    if (send.final) message_.reset();  // nothing reads it any more: free the request's bytes
    answer_(std::move(answer));
  }

 private:
  const uint64_t max_bytes_;
  std::shared_ptr<const inference::ModelInferRequest> message_;
  absl::AnyInvocable<void(StreamAnswer)> answer_;
  std::optional<grpc::ByteBuffer> encoded_;
  bool send_empty_final_ = false;
};

}  // namespace

void RunUnaryInfer(const ModelManager& manager, const InferCallOptions& options, const InferCallMetadata& metadata,
                   const inference::ModelInferRequest& message, std::shared_ptr<const void> owner,
                   std::shared_ptr<const CancellationToken> cancellation,
                   absl::AnyInvocable<void(InferCallResult) &&> done) {
  // gRPC's codec. A copy of `owner`: it may be all that keeps `message` alive, and a failed
  // decode drops what it was given while the message is still read (its id).
  auto decode = [&message, &owner](VersionResolver&) { return DecodeModelInferRequest(message, owner); };
  Pipeline(manager, options)
      .Run(Target(message, metadata, std::move(cancellation)), decode,
           std::make_unique<UnaryInferResponder>(options.max_response_bytes, std::move(done)));
}

void RunStreamInfer(const ModelManager& manager, const InferCallOptions& options, const InferCallMetadata& metadata,
                    std::shared_ptr<const inference::ModelInferRequest> message,
                    std::shared_ptr<const CancellationToken> cancellation,
                    absl::AnyInvocable<void(StreamAnswer)> answer) {
  const inference::ModelInferRequest& request = *message;
  auto responder = std::make_unique<StreamInferResponder>(options.max_response_bytes, message, std::move(answer));
  StreamInferResponder* stream = responder.get();
  // gRPC's codec, and the stream's own request parameter (Triton's: a bool_param).
  auto decode = [&request, &message, stream](VersionResolver&) -> absl::StatusOr<InferRequest> {
    absl::StatusOr<InferRequest> decoded = DecodeModelInferRequest(request, message);
    if (!decoded.ok()) return decoded;
    if (auto it = decoded->parameters.find(kEnableEmptyFinalResponse); it != decoded->parameters.end()) {
      const bool* enable = std::get_if<bool>(&it->second);
      if (enable == nullptr) {
        return absl::InvalidArgumentError(
            StrCat("invalid value type for '", kEnableEmptyFinalResponse, "' parameter, expected bool_param"));
      }
      stream->set_send_empty_final(*enable);
      decoded->parameters.erase(it);  // the transport's, not the model's
    }
    return decoded;
  };
  Pipeline(manager, options).Run(Target(request, metadata, std::move(cancellation)), decode, std::move(responder));
}

grpc::ByteBuffer StreamErrorAnswer(const inference::ModelInferRequest& request, const absl::Status& status) {
  inference::ModelStreamInferResponse answer;
  answer.set_error_message(std::string(status.message().data(), status.message().size()));
  inference::ModelInferResponse* response = answer.mutable_infer_response();
  response->set_model_name(request.model_name());
  response->set_model_version(request.model_version());
  response->set_id(request.id());
  (*response->mutable_parameters())[kFinalResponseParameter].set_bool_param(true);
  grpc::ByteBuffer buffer;
  bool own = false;
  // Serialising a message this small cannot fail short of running out of memory.
  (void)grpc::SerializationTraits<inference::ModelStreamInferResponse>::Serialize(answer, &buffer, &own);
  return buffer;
}

}  // namespace infera
