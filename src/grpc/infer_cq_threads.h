// InferCqThreads: the threads that serve every gRPC method on the async completion-queue
// API — N threads, each polling its own ServerCompletionQueue and running every call that
// queue matches on that same thread (ModelInfer / ModelStreamInfer: decode, the model when
// it runs inline, encode, Finish, unary_infer_call.h, stream_infer_call.h; the other
// methods' handlers, async_unary_call.h). There is no hand-off from a poller to another
// pool: the thread that polls is the thread that runs.
//
// Each thread keeps `kCallsRequestedPerQueue` ModelInfer and as many ModelStreamInfer
// calls requested on its queue, and one call of each of the context's other `methods`;
// a call re-requests one as soon as it is matched.
//
// Usage (the queues must exist before the server is built, the threads after):
//   InferCqThreads threads(n);
//   threads.AddQueues(builder);         // before builder.BuildAndStart()
//   threads.Start(context);             // after
//   ... server->Shutdown(deadline);     // calls in flight finish; requests come back not-ok
//   threads.Shutdown();                 // queues shut down, drained, threads joined
//
// Thread-safe for the sequence above. Shutdown must come after grpc::Server::Shutdown
// has returned (gRPC's rule: no call may still use a queue being shut down); it is
// idempotent and the destructor calls it.
#ifndef INFERA_GRPC_INFER_CQ_THREADS_H_
#define INFERA_GRPC_INFER_CQ_THREADS_H_

#include <memory>
#include <thread>
#include <vector>

#include "grpc/async_infer_context.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/server_builder.h"

namespace infera {

class InferCqThreads {
 public:
  static constexpr int kCallsRequestedPerQueue = 4;

  // REQUIRES: threads >= 1.
  explicit InferCqThreads(int threads);
  ~InferCqThreads();
  InferCqThreads(const InferCqThreads&) = delete;
  InferCqThreads& operator=(const InferCqThreads&) = delete;

  void AddQueues(grpc::ServerBuilder& builder);
  // `context` outlives the threads (until Shutdown returns).
  void Start(const AsyncInferContext& context);
  void Shutdown();

  int threads() const { return threads_; }

 private:
  const int threads_;
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues_;
  std::vector<std::thread> pollers_;
  bool shut_down_ = false;
};

}  // namespace infera

#endif  // INFERA_GRPC_INFER_CQ_THREADS_H_
