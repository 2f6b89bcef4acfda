// A prompt's length against the model's context (max_model_len), decided before and
// while it is tokenised (docs/llm.md "Prompt length"), so that a prompt far past the
// context costs neither a place in the prompt worker's queue nor its time.
//
//   PromptLimit::budget()  the most ids a prompt may have: max_model_len less max_tokens
//                          when the request sets one below max_model_len (vLLM refuses
//                          prompt + max_tokens > max_model_len), else less one
//   LeastTextIds           the fewest ids a text can tokenise to, from its size alone
//                          (Tokenizer::max_bytes_per_token); O(1), no tokenising
//   TokenizePrompt         the prompt's ids when they fit the budget; tokenisation stops
//                          once they pass it (Tokenizer::EncodeWithin)
//   PromptTooLong          the refusal (InvalidArgument), in vLLM's words, naming
//                          max_model_len
//
// Thread-safe (functions of their arguments).
//
// Usage:
//   PromptLimit limit{max_model_len, sampling.max_tokens, max_tokens_set};
//   if (int64_t least = LeastTextIds(tokenizer, text, true); least > limit.budget()) {
//     return PromptTooLong(limit, least, /*exact=*/false, text.size(), tokenizer);
//   }
//   ASSIGN_OR_RETURN(std::vector<int32_t> ids, TokenizePrompt(tokenizer, text, true, limit));
#ifndef INFERA_LLM_PROMPT_LENGTH_H_
#define INFERA_LLM_PROMPT_LENGTH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llm/text_imports.h"

namespace infera::llm {

struct PromptLimit {
  int64_t max_model_len = 0;
  int64_t max_tokens = 0;       // the completion's max_tokens
  bool max_tokens_set = true;   // false: the completion takes what the prompt leaves

  int64_t budget() const;
  // The budget leaves max_tokens for the completion (else one token).
  bool counts_max_tokens() const;
};

// The fewest ids `text` tokenises to (special tokens included when `add_special_tokens`);
// only the special tokens when the tokenizer has no bytes-per-token bound.
int64_t LeastTextIds(const Tokenizer& tokenizer, size_t text_bytes, bool add_special_tokens);

// `least_ids`: the prompt has at least (or, `exact`, exactly) that many ids; `text_bytes`
// > 0: the count came from that many bytes of the prompt (all of a text prompt, the
// messages' contents of a chat), which the message then states.
absl::Status PromptTooLong(const PromptLimit& limit, int64_t least_ids, bool exact, size_t text_bytes = 0,
                           const Tokenizer* tokenizer = nullptr);

absl::StatusOr<std::vector<int32_t>> TokenizePrompt(const Tokenizer& tokenizer, std::string_view text,
                                                    bool add_special_tokens, const PromptLimit& limit);

}  // namespace infera::llm

#endif  // INFERA_LLM_PROMPT_LENGTH_H_
