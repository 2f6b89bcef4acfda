#include "grpc/infer_call.h"

#include <chrono>
#include <utility>

#include "protocol/model_answers.h"
#include "grpc/infer_message_codec.h"
#include "manager/single_response.h"
#include "shm/shared_memory_binding.h"

namespace infera {
namespace {

using Done = absl::AnyInvocable<void(InferCallResult) &&>;

// Ends the trace (if any) with the call's outcome, then answers.
void Answer(std::optional<InferTrace>& trace, std::string_view request_id, InferCallResult result,
            Done& done) {
  if (trace) {
    result.traceparent = trace->traceparent();
    std::optional<std::string> error;
    if (!result.status.ok()) error = std::string(result.status.message());
    std::move(*trace).Finish("grpc", request_id, "rpc.grpc.status_code",
                             std::to_string(static_cast<int>(result.status.code())), std::move(error),
                             std::chrono::steady_clock::now());
    trace.reset();
  }
  std::move(done)(std::move(result));
}

void Fail(std::optional<InferTrace>& trace, std::string_view request_id, absl::Status status, Done& done) {
  InferCallResult result;
  result.status = std::move(status);
  Answer(trace, request_id, std::move(result), done);
}

}  // namespace

void RunModelInfer(const ModelManager& manager, const inference::ModelInferRequest& message,
                   std::shared_ptr<const void> owner,
                   std::shared_ptr<const CancellationToken> cancellation,
                   const InferCallOptions& options, const InferCallMetadata& metadata,
                   ResponseFraming framing, Done done) {
  const auto received = std::chrono::steady_clock::now();
  std::optional<InferTrace> trace = InferTrace::Start(options.trace, message.model_name(),
                                                      metadata.traceparent, received);
  // A copy: `owner` may be all that keeps `message` alive, and a failed decode drops what
  // it was given while `message` is still read below (its id in the error answer).
  absl::StatusOr<InferRequest> request = DecodeModelInferRequest(message, owner);
  const auto decoded = std::chrono::steady_clock::now();
  if (!request.ok()) return Fail(trace, message.id(), request.status(), done);
  if (trace) trace->Parsed(decoded);
  absl::StatusOr<SharedMemoryOutputs> shm = BindSharedMemory(options.shared_memory, *request);
  if (!shm.ok()) return Fail(trace, request->id, shm.status(), done);
  auto model = manager.GetModelVersion(request->model_name, request->model_version,
                                       RoutingKey(request->parameters, metadata.routing_key));
  if (!model.ok()) return Fail(trace, request->id, model.status(), done);
  (*model)->statistics().RecordDecode(static_cast<uint64_t>(std::chrono::nanoseconds(decoded - received).count()));
  request->cancellation = std::move(cancellation);
  const uint64_t limit = options.max_response_bytes;
  std::string request_id = request->id;
  // The handle is held while this frontend uses the version (until Infer returns, the
  // request then being in the version's scheduler); the completion does not hold it: an
  // unload or a shutdown drain waits for handles before it drains the scheduler, so a
  // queued request holding one would hold up the drain until its timeout. The
  // completion records into the version's FrontendStages, which it shares instead.
  InferCallback answer = [limit, framing, stages = (*model)->statistics().frontend_stages(),
                          shm = *std::move(shm), trace = std::move(trace), request_id = std::move(request_id),
                          done = std::move(done)](absl::StatusOr<InferResponse> response, ResponseDelivery) mutable {
                   InferCallResult result;
                   if (!response.ok()) {
                     result.status = response.status();
                   } else {
                     if (trace) trace->Ran(response->timings);
                     result.status = shm.WriteInto(*response);
                   }
                   if (result.status.ok()) {
                     const auto encode_start = std::chrono::steady_clock::now();
                     absl::StatusOr<grpc::ByteBuffer> serialized = SerializeInferResponse(*response, framing, limit);
                     const auto encode_end = std::chrono::steady_clock::now();
                     if (serialized.ok()) {
                       result.message = *std::move(serialized);
                     } else {
                       result.status = serialized.status();
                     }
                     stages->RecordEncode(
                         static_cast<uint64_t>(std::chrono::nanoseconds(encode_end - encode_start).count()));
                     if (trace) trace->Serialized(encode_start, encode_end);
                   }
                   Answer(trace, request_id, std::move(result), done);
                 };
  // A decoupled model (an LLM) answers a unary call with exactly one response.
  if ((*model)->decoupled()) answer = SingleResponse((*model)->name(), std::move(answer));
  (*model)->Infer(std::move(*request), std::move(answer));
}

}  // namespace infera
