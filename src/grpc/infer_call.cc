#include "grpc/infer_call.h"

#include <chrono>
#include <utility>

#include "common/str_cat.h"
#include "grpc/infer_message_codec.h"
#include "protocol/model_answers.h"
#include "shm/shared_memory_binding.h"

namespace infera {
namespace {

// Ends the trace (if any) with the call's outcome, then answers.
void Answer(std::optional<InferTrace>& trace, std::string_view request_id, absl::Status status,
            absl::AnyInvocable<void(absl::Status, std::string_view)>& done) {
  std::string traceparent;
  if (trace) {
    traceparent = trace->traceparent();
    std::optional<std::string> error;
    if (!status.ok()) error = std::string(status.message());
    std::move(*trace).Finish("grpc", request_id, "rpc.grpc.status_code",
                             std::to_string(static_cast<int>(status.code())), std::move(error),
                             std::chrono::steady_clock::now());
    trace.reset();
  }
  done(std::move(status), traceparent);
}

}  // namespace

void RunModelInfer(const ModelManager& manager, const inference::ModelInferRequest& message,
                   std::shared_ptr<const void> owner,
                   std::shared_ptr<const CancellationToken> cancellation,
                   const InferCallOptions& options, const InferCallMetadata& metadata,
                   inference::ModelInferResponse* response,
                   absl::AnyInvocable<void(absl::Status, std::string_view)> done) {
  const auto received = std::chrono::steady_clock::now();
  std::optional<InferTrace> trace = InferTrace::Start(options.trace, message.model_name(),
                                                      metadata.traceparent, received);
  absl::StatusOr<InferRequest> request = DecodeModelInferRequest(message, std::move(owner));
  const auto decoded = std::chrono::steady_clock::now();
  if (!request.ok()) return Answer(trace, message.id(), request.status(), done);
  if (trace) trace->Parsed(decoded);
  absl::StatusOr<SharedMemoryOutputs> shm = BindSharedMemory(options.shared_memory, *request);
  if (!shm.ok()) return Answer(trace, request->id, shm.status(), done);
  auto model = manager.GetModelVersion(request->model_name, request->model_version,
                                       RoutingKey(request->parameters, metadata.routing_key));
  if (!model.ok()) return Answer(trace, request->id, model.status(), done);
  (*model)->statistics().RecordDecode(static_cast<uint64_t>(std::chrono::nanoseconds(decoded - received).count()));
  request->cancellation = std::move(cancellation);
  const uint64_t limit = options.max_response_bytes;
  std::string request_id = request->id;
  (*model)->Infer(std::move(*request),
                  [response, limit, stages = (*model)->statistics().frontend_stages(), shm = *std::move(shm),
                   trace = std::move(trace), request_id = std::move(request_id), done = std::move(done)](absl::StatusOr<InferResponse> result) mutable {
                    if (!result.ok()) return Answer(trace, request_id, result.status(), done);
                    if (trace) trace->Ran(result->timings);
                    if (absl::Status written = shm.WriteInto(*result); !written.ok()) {
                      return Answer(trace, request_id, std::move(written), done);
                    }
                    const auto encode_start = std::chrono::steady_clock::now();
                    absl::Status encoded = EncodeModelInferResponse(*result, response);
                    if (encoded.ok() && response->ByteSizeLong() > limit) {
                      encoded = absl::ResourceExhaustedError(
                          StrCat("response of ", response->ByteSizeLong(), " bytes exceeds the ", limit,
                                 "-byte gRPC message limit (--grpc-max-message-bytes)"));
                      response->Clear();
                    }
                    const auto encode_end = std::chrono::steady_clock::now();
                    stages->RecordEncode(
                        static_cast<uint64_t>(std::chrono::nanoseconds(encode_end - encode_start).count()));
                    if (trace) trace->Serialized(encode_start, encode_end);
                    Answer(trace, request_id, std::move(encoded), done);
                  });
}

}  // namespace infera
