// CancellationToken: lets a frontend tell the core that nobody waits for a request
// any more (the client disconnected, a gRPC call was cancelled).
//
// The frontend holds one reference and calls Cancel(); the request carries another.
// The scheduler checks IsCancelled() before it spends compute on a queued request and
// drops it (answering Cancelled), so an abandoned request never costs a model run.
//
// A token may have a parent (an ensemble's per-request token whose parent is the
// client's): it is cancelled when it or its parent is.
//
// Thread-safe.
#ifndef INFERA_API_CANCELLATION_H_
#define INFERA_API_CANCELLATION_H_

#include <atomic>
#include <memory>
#include <utility>

namespace infera {

class CancellationToken {
 public:
  CancellationToken() = default;
  explicit CancellationToken(std::shared_ptr<const CancellationToken> parent) : parent_(std::move(parent)) {}

  void Cancel() { cancelled_.store(true, std::memory_order_release); }
  bool IsCancelled() const {
    return cancelled_.load(std::memory_order_acquire) || (parent_ && parent_->IsCancelled());
  }

 private:
  std::atomic<bool> cancelled_{false};
  const std::shared_ptr<const CancellationToken> parent_;
};

}  // namespace infera

#endif  // INFERA_API_CANCELLATION_H_
