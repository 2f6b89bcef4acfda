// LiveCalls: how many async infer calls (unary_infer_call.h, stream_infer_call.h) have
// arrived and are not yet deleted, so that shutdown can wait for them before it shuts
// their completion queues down.
//
// gRPC's rule for the async API: no operation may be started on a completion queue after
// it is shut down (grpc_call_start_batch asserts). grpc::Server::Shutdown does not wait
// for the application's calls: a call whose client is gone (a cancelled stream still
// waiting for its queued requests) can outlive it and start its Finish afterwards. So the
// server waits here — the queue threads still polling — until every call has ended.
//
// Thread-safe. Add/Remove are one relaxed atomic each on the request path; the mutex is
// taken only by the Remove that reaches zero and by AwaitNone.
#ifndef INFERA_GRPC_LIVE_CALLS_H_
#define INFERA_GRPC_LIVE_CALLS_H_

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace infera {

class LiveCalls {
 public:
  void Add() { count_.fetch_add(1, std::memory_order_relaxed); }
  void Remove() {
    if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      absl::MutexLock lock(&mu_);  // wakes AwaitNone when it releases the lock
    }
  }
  // Returns once no call is live (new calls must no longer be arriving).
  void AwaitNone() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](std::atomic<int64_t>* count) { return count->load(std::memory_order_acquire) == 0; }, &count_));
  }
  int64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> count_{0};
  absl::Mutex mu_;
};

}  // namespace infera

#endif  // INFERA_GRPC_LIVE_CALLS_H_
