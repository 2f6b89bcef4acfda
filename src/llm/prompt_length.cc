#include "llm/prompt_length.h"

#include <algorithm>
#include <limits>

#include "common/str_cat.h"

namespace infera::llm {

bool PromptLimit::counts_max_tokens() const {
  return max_tokens_set && max_tokens >= 1 && max_tokens < max_model_len;
}

int64_t PromptLimit::budget() const {
  return counts_max_tokens() ? max_model_len - max_tokens : std::max<int64_t>(0, max_model_len - 1);
}

int64_t LeastTextIds(const Tokenizer& tokenizer, size_t text_bytes, bool add_special_tokens) {
  const int64_t specials = static_cast<int64_t>(tokenizer.num_special_tokens(add_special_tokens));
  const std::optional<size_t> per_token = tokenizer.max_bytes_per_token();
  if (!per_token || *per_token == 0) return specials;
  const size_t ids = text_bytes / *per_token + (text_bytes % *per_token != 0 ? 1 : 0);
  return specials + static_cast<int64_t>(std::min<size_t>(ids, std::numeric_limits<int64_t>::max() / 2));
}

absl::Status PromptTooLong(const PromptLimit& limit, int64_t least_ids, bool exact, size_t text_bytes,
                           const Tokenizer* tokenizer) {
  const std::string at_least = exact ? "" : "at least ";
  std::string message = StrCat("This model's maximum context length is ", limit.max_model_len,
                               " tokens (max_model_len). However, ");
  if (!limit.counts_max_tokens()) {
    StrAppend(&message, "the prompt has ", at_least, least_ids,
              " tokens, which leaves no room for a completion. Please reduce the prompt.");
  } else {
    StrAppend(&message, "you requested ", at_least, least_ids + limit.max_tokens, " tokens (", at_least, least_ids,
              " in the prompt, ", limit.max_tokens, " in the completion). Please reduce the prompt or max_tokens.");
  }
  if (text_bytes > 0 && tokenizer != nullptr && tokenizer->max_bytes_per_token()) {
    StrAppend(&message, " (The prompt is at least ", text_bytes, " bytes; this model's tokenizer puts at most ",
              *tokenizer->max_bytes_per_token(), " bytes in one token.)");
  }
  return absl::InvalidArgumentError(message);
}

absl::StatusOr<std::vector<int32_t>> TokenizePrompt(const Tokenizer& tokenizer, std::string_view text,
                                                    bool add_special_tokens, const PromptLimit& limit) {
  const int64_t budget = limit.budget();
  std::optional<std::vector<int32_t>> ids =
      tokenizer.EncodeWithin(text, add_special_tokens, static_cast<size_t>(std::max<int64_t>(0, budget)));
  if (!ids) return PromptTooLong(limit, budget + 1, /*exact=*/false);
  return std::move(*ids);
}

}  // namespace infera::llm
