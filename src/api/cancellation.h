// CancellationToken: lets a frontend tell the core that nobody waits for a request
// any more (the client disconnected, a gRPC call was cancelled).
//
// The frontend holds one reference and calls Cancel(); the request carries another.
// The scheduler checks IsCancelled() before it spends compute on a queued request and
// drops it (answering Cancelled), so an abandoned request never costs a model run.
//
// Thread-safe.
#ifndef INFERA_API_CANCELLATION_H_
#define INFERA_API_CANCELLATION_H_

#include <atomic>

namespace infera {

class CancellationToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_release); }
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace infera

#endif  // INFERA_API_CANCELLATION_H_
