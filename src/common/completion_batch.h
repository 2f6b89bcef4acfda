// CompletionBatch: a scope, on one thread, during which the results of a batch are
// delivered; code that hands each result to another thread (an HTTP connection's I/O
// thread) may defer those hand-offs to the scope's end and make them once per target
// thread instead of once per result (docs/scheduling.md, "Batching that pays off:
// second step").
//
// The scheduler opens one around each batch's run on its worker; the HTTP server's
// HttpResponder::Send, called on that worker for each response, collects the responses
// per I/O thread and registers one flush, which posts one handler per I/O thread.
//
// Scopes nest: an inner scope is a no-op and everything is flushed when the outermost
// one closes. Flushes run in registration order, on the scope's thread, from its
// destructor (so on every exit path). A flush may open scopes of its own and register
// further flushes; they run before the destructor returns.
//
// Thread-compatible: a scope belongs to the thread that created it (it is found through
// a thread-local pointer) and must be destroyed there.
#ifndef INFERA_COMMON_COMPLETION_BATCH_H_
#define INFERA_COMMON_COMPLETION_BATCH_H_

#include <vector>

#include "absl/functional/any_invocable.h"

namespace infera {

class CompletionBatch {
 public:
  CompletionBatch();
  ~CompletionBatch();

  CompletionBatch(const CompletionBatch&) = delete;
  CompletionBatch& operator=(const CompletionBatch&) = delete;

  // The outermost scope open on this thread, or nullptr when none is.
  static CompletionBatch* Current();

  // Runs `flush` once, on this thread, when the outermost scope closes.
  void AtClose(absl::AnyInvocable<void() &&> flush);

 private:
  bool outermost_;
  std::vector<absl::AnyInvocable<void() &&>> flushes_;
};

}  // namespace infera

#endif  // INFERA_COMMON_COMPLETION_BATCH_H_
