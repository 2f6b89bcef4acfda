#include "common/completion_batch.h"

#include <utility>

namespace infera {

CompletionBatch::~CompletionBatch() {
  // A flush that delivers more results (and registers more flushes) extends this loop.
  for (size_t i = 0; i < flushes_.size(); ++i) {
    absl::AnyInvocable<void() &&> flush = std::move(flushes_[i]);
    std::move(flush)();
  }
}

void CompletionBatch::AtClose(absl::AnyInvocable<void() &&> flush) { flushes_.push_back(std::move(flush)); }

}  // namespace infera
