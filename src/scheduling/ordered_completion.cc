#include "scheduling/ordered_completion.h"

#include <vector>

namespace infera {

InferCallback OrderedCompletion::Wrap(InferCallback callback) {
  absl::MutexLock lock(&mu_);
  const uint64_t sequence = next_sequence_++;
  slots_[sequence] = Slot{std::move(callback), std::nullopt};
  return [this, sequence](absl::StatusOr<InferResponse> result, ResponseDelivery delivery) {
    Complete(sequence, std::move(result), delivery);
  };
}

void OrderedCompletion::Complete(uint64_t sequence, absl::StatusOr<InferResponse> result,
                                 ResponseDelivery delivery) {
  mu_.Lock();
  slots_[sequence].result = std::move(result);
  if (delivering_) {  // the delivering thread will pick this one up
    mu_.Unlock();
    return;
  }
  delivering_ = true;
  while (true) {
    std::vector<Slot> ready;
    for (auto it = slots_.find(next_to_deliver_); it != slots_.end() && it->second.result;
         it = slots_.find(next_to_deliver_)) {
      ready.push_back(std::move(it->second));
      slots_.erase(it);
      ++next_to_deliver_;
    }
    if (ready.empty()) break;
    mu_.Unlock();
    // Results that arrived earlier on other threads leave with this call's delivery (its
    // batch, if any, is open on this thread until the call returns).
    for (Slot& slot : ready) slot.callback(std::move(*slot.result), delivery);
    mu_.Lock();
  }
  delivering_ = false;
  mu_.Unlock();
}

}  // namespace infera
