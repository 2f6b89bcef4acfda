// IncrementalDetokenizer: turns a stream of generated token ids into a stream of text
// pieces that are always valid UTF-8.
//
// A byte-level or byte-fallback token may carry part of a character (an emoji is often
// 2–4 tokens); its bytes are held back until the character is complete. A sequence that
// can never complete (invalid UTF-8 from a badly trained model) is emitted as U+FFFD, as
// is an incomplete tail at Flush(). Special tokens produce no text when skipped.
//
// Not thread-safe: one per request, used on the output thread (output_processor.h).
#ifndef INFERA_LLM_INCREMENTAL_DETOKENIZER_H_
#define INFERA_LLM_INCREMENTAL_DETOKENIZER_H_

#include <cstdint>
#include <string>

#include "llm/text_imports.h"

namespace infera::llm {

class IncrementalDetokenizer {
 public:
  // `tokenizer` outlives this object.
  IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens)
      : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}

  // Adds one token; returns the text that became complete (possibly empty).
  std::string Push(int32_t id);
  // Ends the stream: whatever is held back, with an incomplete character as U+FFFD.
  std::string Flush();

 private:
  const Tokenizer& tokenizer_;
  const bool skip_special_tokens_;
  std::string pending_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_INCREMENTAL_DETOKENIZER_H_
