#include "llm/incremental_detokenizer.h"

#include "llm/text_imports.h"

namespace infera::llm {

std::string IncrementalDetokenizer::Push(int32_t id) {
  if (skip_special_tokens_ && tokenizer_.IsSpecial(id)) return {};
  pending_.append(tokenizer_.TokenBytes(id));
  size_t tail = 0;
  const size_t complete = CompleteUtf8Prefix(pending_, &tail);
  std::string out = SanitizeUtf8(std::string_view(pending_).substr(0, complete));
  pending_.erase(0, complete);
  return out;
}

std::string IncrementalDetokenizer::Flush() {
  std::string out = SanitizeUtf8(pending_);
  pending_.clear();
  return out;
}

}  // namespace infera::llm
