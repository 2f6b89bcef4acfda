// UnaryInferCall: one ModelInfer call on the async completion-queue API.
//
// Life of a call, every tag on the completion queue `cq` it was requested on (so on that
// queue's one polling thread, infer_cq_threads.h):
//
//   Request(): AsyncNotifyWhenDone + RequestModelInfer on `cq`
//   OnMatched(ok): a call arrived — another call object is requested on `cq` at once, then
//     the request is parsed into a heap ModelInferRequest (raw inputs become zero-copy
//     views: the tensors keep the message alive) and run by RunUnaryInfer (the one
//     inference pipeline, infer_call.h) *on this thread*. A model that runs inline
//     completes here; others complete on a worker (a decoupled model's only response: on
//     its own thread).
//   Respond (from the pipeline's responder, on this thread or the worker): serialised
//     answer → Finish (a traced call first adds `traceparent` to the initial metadata).
//   OnFinished(ok): the answer was sent (or the client was gone). No write stage is
//     recorded: gRPC flow-controls the bytes inside the library (as before; diagnosis.md).
//   OnDone(ok): the call is over; if it was cancelled (client cancel or disconnect,
//     deadline passed, server shutdown timeout) the request's CancellationToken fires so
//     the scheduler drops it. May come before Respond.
//
// A request tag that comes back not-ok (the server is shutting down) deletes the object;
// no done tag follows then (gRPC arms it only for a matched call).
//
// Lifetime: an atomic reference count — one for the done tag, one for the answer (until
// its finish tag is back), one for the worker while it is inside Finish — deletes the
// object when the last one goes, so it is never freed under a thread still returning
// from gRPC.
//
// Thread-safe as described: the polling thread and at most one worker touch a call.
#ifndef INFERA_GRPC_UNARY_INFER_CALL_H_
#define INFERA_GRPC_UNARY_INFER_CALL_H_

#include <atomic>
#include <memory>

#include "api/cancellation.h"
#include "grpc/async_infer_context.h"
#include "grpc/cq_tag.h"
#include "grpc/infer_call.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/async_unary_call.h"
#include "grpcpp/support/byte_buffer.h"

namespace infera {

class UnaryInferCall {
 public:
  // Creates a call object and requests the next ModelInfer call on `cq`. `context` and
  // `cq` outlive it.
  static void Request(const AsyncInferContext& context, grpc::ServerCompletionQueue* cq);

 private:
  UnaryInferCall(const AsyncInferContext& context, grpc::ServerCompletionQueue* cq)
      : context_(context), cq_(cq) {}
  ~UnaryInferCall() = default;

  void OnMatched(bool ok);
  void OnFinished(bool ok);
  void OnDone(bool ok);
  void Respond(InferCallResult result);
  void Unref();

  const AsyncInferContext& context_;
  grpc::ServerCompletionQueue* const cq_;
  grpc::ServerContext server_context_;
  grpc::ByteBuffer request_;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> responder_{&server_context_};
  const std::shared_ptr<CancellationToken> cancellation_ = std::make_shared<CancellationToken>();
  std::atomic<int> refs_{0};

  MemberTag<UnaryInferCall> matched_tag_{this, &UnaryInferCall::OnMatched};
  MemberTag<UnaryInferCall> finish_tag_{this, &UnaryInferCall::OnFinished};
  MemberTag<UnaryInferCall> done_tag_{this, &UnaryInferCall::OnDone};
};

}  // namespace infera

#endif  // INFERA_GRPC_UNARY_INFER_CALL_H_
