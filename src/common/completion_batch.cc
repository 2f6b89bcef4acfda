#include "common/completion_batch.h"

#include <utility>

namespace infera {
namespace {
thread_local CompletionBatch* current = nullptr;
}  // namespace

CompletionBatch::CompletionBatch() : outermost_(current == nullptr) {
  if (outermost_) current = this;
}

CompletionBatch::~CompletionBatch() {
  if (!outermost_) return;
  // Still current while flushing: a flush that delivers more results (and registers
  // more flushes) extends this loop rather than opening a scope nobody closes.
  for (size_t i = 0; i < flushes_.size(); ++i) {
    absl::AnyInvocable<void() &&> flush = std::move(flushes_[i]);
    std::move(flush)();
  }
  current = nullptr;
}

CompletionBatch* CompletionBatch::Current() { return current; }

void CompletionBatch::AtClose(absl::AnyInvocable<void() &&> flush) { flushes_.push_back(std::move(flush)); }

}  // namespace infera
