// OrderedCompletion: delivers request results in the order the requests were wrapped
// (dynamic_batching.preserve_ordering).
//
// Wrap() gives each request's callback a sequence number; a result that arrives early
// waits until every earlier one has been delivered. One thread delivers at a time, so
// callbacks never run concurrently or out of order. Each request completes once (a
// decoupled model, whose requests complete several times, cannot preserve ordering: its
// config is refused at load).
//
// Thread-safe. Must outlive every wrapped callback.
#ifndef INFERA_SCHEDULING_ORDERED_COMPLETION_H_
#define INFERA_SCHEDULING_ORDERED_COMPLETION_H_

#include <cstdint>
#include <map>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/infer_request.h"

namespace infera {

class OrderedCompletion {
 public:
  InferCallback Wrap(InferCallback callback);

 private:
  struct Slot {
    InferCallback callback;
    std::optional<absl::StatusOr<InferResponse>> result;
  };
  void Complete(uint64_t sequence, absl::StatusOr<InferResponse> result, ResponseDelivery delivery);

  absl::Mutex mu_;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_to_deliver_ ABSL_GUARDED_BY(mu_) = 0;
  bool delivering_ ABSL_GUARDED_BY(mu_) = false;
  std::map<uint64_t, Slot> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace infera

#endif  // INFERA_SCHEDULING_ORDERED_COMPLETION_H_
