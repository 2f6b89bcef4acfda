// AsyncUnaryMethod: one unary RPC served on gRPC's async completion-queue API — the
// control-plane RPCs of inference.GRPCInferenceService and grpc.health.v1.Health/Check,
// so the server has no callback-API method (and gRPC starts no callback-API threads).
//
// Life of a call, every tag on the completion queue `cq` it was requested on (so on that
// queue's one polling thread, infer_cq_threads.h):
//
//   Request(cq): a call object is created and the method requested on `cq`
//   matched(ok): a call arrived — the next call object is requested on `cq` at once, the
//     call is counted in LiveCalls, and the handler runs on this thread with a UnaryReply
//   reply(status): from the handler (inline) or later from any thread (the admin
//     executor's worker for RepositoryModelLoad/Unload): Finish with the response, or
//     FinishWithError(status) when it is not OK
//   finished(ok): the answer was sent (or the client was gone) — the object is deleted
//
// A request tag that comes back not-ok (the server is shutting down) deletes the object.
// A handler that drops its UnaryReply without calling it answers INTERNAL (a bug shows
// up as an error, not a call that never ends and holds up shutdown).
//
// Lifetime: an atomic reference count — one for the finish tag, one for a replying
// thread while it is inside Finish — so the object is never freed under a thread still
// returning from gRPC.
//
// Thread-safe as described. The method object, its service and LiveCalls outlive every
// call (the server joins the queue threads before destroying them).
//
// Usage:
//   methods.push_back(MakeAsyncUnaryMethod(service, &Service::RequestServerLive,
//       [](grpc::ServerContext&, const Req&, Resp* response, UnaryReply reply) {
//         response->set_live(true);
//         std::move(reply)(absl::OkStatus());
//       }, live_calls));
//   ... on each queue, before its thread polls: methods[i]->Request(cq);
#ifndef INFERA_GRPC_ASYNC_UNARY_CALL_H_
#define INFERA_GRPC_ASYNC_UNARY_CALL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "common/check.h"
#include "grpc/cq_tag.h"
#include "grpc/grpc_status.h"
#include "grpc/live_calls.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/async_unary_call.h"

namespace infera {

// A method the completion-queue threads serve: each queue requests it once at start,
// and each matched call requests the next one on its queue.
class AsyncMethod {
 public:
  virtual ~AsyncMethod() = default;
  // Creates a call object and requests the next call of this method on `cq`.
  virtual void Request(grpc::ServerCompletionQueue* cq) const = 0;
};

// How a handler answers its call, exactly once: std::move(reply)(status). OK sends the
// response the handler filled; an error sends the status and no response. Move-only;
// destroyed without being called, it answers INTERNAL.
class UnaryReply {
 public:
  class Target {
   public:
    virtual void Reply(absl::Status status) = 0;

   protected:
    ~Target() = default;
  };

  explicit UnaryReply(Target* target) : target_(target) {}
  UnaryReply(UnaryReply&& other) noexcept : target_(std::exchange(other.target_, nullptr)) {}
  UnaryReply& operator=(UnaryReply&&) = delete;
  UnaryReply(const UnaryReply&) = delete;
  ~UnaryReply() {
    if (target_ != nullptr) {
      std::exchange(target_, nullptr)->Reply(absl::InternalError("the server dropped this call unanswered"));
    }
  }

  void operator()(absl::Status status) && {
    INFERA_CHECK(target_ != nullptr);  // answered twice
    std::exchange(target_, nullptr)->Reply(std::move(status));
  }

 private:
  Target* target_;
};

template <typename Req, typename Resp>
class AsyncUnaryMethod final : public AsyncMethod {
 public:
  using Responder = grpc::ServerAsyncResponseWriter<Resp>;
  // Requests one call on the queue (the generated Service::RequestX, queue as both the
  // new-call and the notification queue).
  using RequestFn =
      std::function<void(grpc::ServerContext*, Req*, Responder*, grpc::ServerCompletionQueue*, void*)>;
  // Runs on the queue thread; answers through the reply, now or later from any thread.
  using Handler = std::function<void(grpc::ServerContext&, const Req&, Resp*, UnaryReply)>;

  AsyncUnaryMethod(RequestFn request, Handler handler, LiveCalls* live_calls)
      : request_(std::move(request)), handler_(std::move(handler)), live_calls_(live_calls) {}

  void Request(grpc::ServerCompletionQueue* cq) const override {
    auto* call = new Call(this, cq);
    request_(&call->context_, &call->request_, &call->responder_, cq, &call->matched_tag_);
  }

 private:
  class Call final : public UnaryReply::Target {
   public:
    Call(const AsyncUnaryMethod* method, grpc::ServerCompletionQueue* cq) : method_(method), cq_(cq) {}

    void Reply(absl::Status status) override {
      // This thread may still be inside Finish when the finish tag is back.
      refs_.fetch_add(1, std::memory_order_relaxed);
      if (status.ok()) {
        responder_.Finish(response_, grpc::Status::OK, &finish_tag_);
      } else {
        responder_.FinishWithError(ToGrpcStatus(status), &finish_tag_);
      }
      Unref();
    }

   private:
    friend class AsyncUnaryMethod;
    ~Call() = default;

    void OnMatched(bool ok) {
      if (!ok) {  // the server is shutting down: no call
        delete this;
        return;
      }
      refs_.store(1, std::memory_order_relaxed);  // the finish tag
      method_->live_calls_->Add();
      method_->Request(cq_);  // the next call on this queue
      method_->handler_(context_, request_, &response_, UnaryReply(this));
    }
    void OnFinished(bool) { Unref(); }
    void Unref() {
      if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      LiveCalls* live = method_->live_calls_;
      delete this;
      live->Remove();  // last: shutdown may stop the queues once every call is gone
    }

    const AsyncUnaryMethod* const method_;
    grpc::ServerCompletionQueue* const cq_;
    grpc::ServerContext context_;
    Req request_;
    Resp response_;
    Responder responder_{&context_};
    std::atomic<int> refs_{0};
    MemberTag<Call> matched_tag_{this, &Call::OnMatched};
    MemberTag<Call> finish_tag_{this, &Call::OnFinished};
  };

  const RequestFn request_;
  const Handler handler_;
  LiveCalls* const live_calls_;
};

// `request` is the generated async Service::RequestX of `service` (deduced from it).
template <typename Service, typename Req, typename Resp>
std::unique_ptr<AsyncMethod> MakeAsyncUnaryMethod(
    std::type_identity_t<Service>* service,
    void (Service::*request)(grpc::ServerContext*, Req*, grpc::ServerAsyncResponseWriter<Resp>*,
                             grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*),
    typename AsyncUnaryMethod<Req, Resp>::Handler handler, LiveCalls* live_calls) {
  return std::make_unique<AsyncUnaryMethod<Req, Resp>>(
      [service, request](grpc::ServerContext* context, Req* message,
                         grpc::ServerAsyncResponseWriter<Resp>* responder, grpc::ServerCompletionQueue* cq,
                         void* tag) { (service->*request)(context, message, responder, cq, cq, tag); },
      std::move(handler), live_calls);
}

}  // namespace infera

#endif  // INFERA_GRPC_ASYNC_UNARY_CALL_H_
