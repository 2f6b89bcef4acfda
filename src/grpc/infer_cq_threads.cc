#include "grpc/infer_cq_threads.h"

#include <pthread.h>

#include <string>

#include "common/check.h"
#include "grpc/cq_tag.h"
#include "grpc/stream_infer_call.h"
#include "grpc/unary_infer_call.h"

namespace infera {
namespace {

void Poll(grpc::ServerCompletionQueue* queue) {
  void* tag = nullptr;
  bool ok = false;
  // Next() returns false once the queue is shut down and every tag has been delivered.
  while (queue->Next(&tag, &ok)) static_cast<CqTag*>(tag)->Proceed(ok);
}

}  // namespace

InferCqThreads::InferCqThreads(int threads) : threads_(threads) { INFERA_CHECK(threads >= 1); }

InferCqThreads::~InferCqThreads() { Shutdown(); }

void InferCqThreads::AddQueues(grpc::ServerBuilder& builder) {
  for (int i = 0; i < threads_; ++i) queues_.push_back(builder.AddCompletionQueue());
}

void InferCqThreads::Start(const AsyncInferContext& context) {
  for (size_t i = 0; i < queues_.size(); ++i) {
    grpc::ServerCompletionQueue* queue = queues_[i].get();
    for (int n = 0; n < kCallsRequestedPerQueue; ++n) {
      UnaryInferCall::Request(context, queue);
      StreamInferCall::Request(context, queue);
    }
    for (const AsyncMethod* method : context.methods) method->Request(queue);
    pollers_.emplace_back([queue] { Poll(queue); });
    const std::string name = "grpc-infer-" + std::to_string(i);
    pthread_setname_np(pollers_.back().native_handle(), name.substr(0, 15).c_str());
  }
}

void InferCqThreads::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& queue : queues_) queue->Shutdown();
  for (std::thread& poller : pollers_) poller.join();
  if (pollers_.empty()) {
    // Never started (the server failed to start): nothing was requested, but a queue is
    // drained before it is destroyed all the same.
    for (auto& queue : queues_) Poll(queue.get());
  }
  pollers_.clear();
}

}  // namespace infera
