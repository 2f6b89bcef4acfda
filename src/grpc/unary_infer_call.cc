#include "grpc/unary_infer_call.h"

#include <utility>

#include "common/logging.h"
#include "grpc/admin_audit.h"
#include "grpc/api_key_check.h"
#include "security/api_key_meter.h"
#include "grpc/arena_infer_request.h"
#include "grpc/grpc_status.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace infera {

void UnaryInferCall::Request(const AsyncInferContext& context, grpc::ServerCompletionQueue* cq) {
  auto* call = new UnaryInferCall(context, cq);
  call->server_context_.AsyncNotifyWhenDone(&call->done_tag_);
  context.service->RequestModelInfer(&call->server_context_, &call->request_, &call->responder_, cq, cq,
                                     &call->matched_tag_);
}

void UnaryInferCall::OnMatched(bool ok) {
  if (!ok) {  // the server is shutting down: no call, no done tag
    delete this;
    return;
  }
  // Two references: the done tag and the answer (released when its finish tag is back).
  refs_.store(2, std::memory_order_relaxed);
  context_.live_calls->Add();
  // The next call on this queue can be matched while this one runs.
  Request(context_, cq_);
  auto message = MakeArenaModelInferRequest();
  grpc::Status parsed = grpc::SerializationTraits<inference::ModelInferRequest>::Deserialize(&request_, message.get());
  if (!parsed.ok()) {
    InferCallResult result;
    result.status = absl::Status(static_cast<absl::StatusCode>(parsed.error_code()),
                                 parsed.error_message());
    return Respond(std::move(result));
  }
  const inference::ModelInferRequest& request = *message;
  if (context_.guard != nullptr) {  // a restricted `inference` category (api/admin_guard.h)
    absl::Status restricted =
        context_.guard->CheckRestricted(ApiCategory::kInference, MetadataLookup(server_context_));
    if (!restricted.ok()) {
      InferCallResult result;
      result.status = std::move(restricted);
      return Respond(std::move(result));
    }
  }
  absl::StatusOr<ApiKeyGrantPtr> key = AuthorizeGrpcCall(context_.api_keys, server_context_, request);
  if (!key.ok()) {
    InferCallResult result;
    result.status = key.status();
    return Respond(std::move(result));
  }
  InferCallMetadata metadata = InferCallMetadata::From(server_context_.client_metadata());
  metadata.token_meter = ApiKeyTokenMeter(*std::move(key));
  RunUnaryInfer(*context_.manager, context_.infer, metadata, request,
                std::move(message), cancellation_, [this](InferCallResult result) { Respond(std::move(result)); });
}

void UnaryInferCall::Respond(InferCallResult result) {
  // This thread may still be inside Finish when the finish and done tags are back.
  refs_.fetch_add(1, std::memory_order_relaxed);
  if (!result.traceparent.empty()) server_context_.AddInitialMetadata("traceparent", result.traceparent);
  if (result.status.ok()) {
    responder_.Finish(result.message, grpc::Status::OK, &finish_tag_);
  } else {
    responder_.FinishWithError(ToGrpcStatus(result.status), &finish_tag_);
  }
  Unref();
}

void UnaryInferCall::OnFinished(bool) { Unref(); }

void UnaryInferCall::OnDone(bool) {
  if (server_context_.IsCancelled()) {
    cancellation_->Cancel();
    INFERA_LOG(VERBOSE) << "gRPC ModelInfer cancelled by the client";
  }
  Unref();
}

void UnaryInferCall::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  LiveCalls* live = context_.live_calls;
  delete this;
  live->Remove();  // last: shutdown may stop the queues once every call is gone
}

}  // namespace infera
