// CompletionBatch: the delivery of one batch's results, on one thread; code that hands
// each result to another thread (an HTTP connection's I/O thread) may defer those
// hand-offs to the batch's end and make them once per target thread instead of once per
// result (docs/scheduling.md, "Batching that pays off: second step").
//
// The scheduler's worker makes one around each batch's run and passes it explicitly with
// each result (ResponseDelivery::batch, api/infer_request.h); the HTTP server's
// HttpResponder::Send, given it, collects the responses per I/O thread and registers one
// flush, which posts one handler per I/O thread. A batch run inside another batch's
// delivery (an ensemble step run inline) has its own CompletionBatch, flushed when that
// inner run ends.
//
// Flushes run in registration order, on the batch's thread, from its destructor (so on
// every exit path). A flush may register further flushes; they run before the
// destructor returns.
//
// Not thread-safe: a batch belongs to the thread that made it and must be destroyed there;
// pointers to it are valid only during the delivery calls it is passed to.
#ifndef INFERA_COMMON_COMPLETION_BATCH_H_
#define INFERA_COMMON_COMPLETION_BATCH_H_

#include <vector>

#include "absl/functional/any_invocable.h"

namespace infera {

class CompletionBatch {
 public:
  CompletionBatch() = default;
  ~CompletionBatch();

  CompletionBatch(const CompletionBatch&) = delete;
  CompletionBatch& operator=(const CompletionBatch&) = delete;

  // Runs `flush` once, on this thread, when the batch closes.
  void AtClose(absl::AnyInvocable<void() &&> flush);

 private:
  std::vector<absl::AnyInvocable<void() &&>> flushes_;
};

}  // namespace infera

#endif  // INFERA_COMMON_COMPLETION_BATCH_H_
