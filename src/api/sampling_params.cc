#include "api/sampling_params.h"

#include "common/str_cat.h"

namespace infera {

absl::Status SamplingParams::Validate() const {
  auto bad = [](std::string_view field, std::string_view rule) {
    return absl::InvalidArgumentError(StrCat(field, " ", rule));
  };
  if (!(temperature >= 0.0 && temperature <= 100.0)) return bad("temperature", "must be in [0, 100]");
  if (top_k < -1) return bad("top_k", "must be -1, 0 (off) or positive");
  if (!(top_p > 0.0 && top_p <= 1.0)) return bad("top_p", "must be in (0, 1]");
  if (!(min_p >= 0.0 && min_p <= 1.0)) return bad("min_p", "must be in [0, 1]");
  if (!(repetition_penalty > 0.0 && repetition_penalty <= 10.0)) {
    return bad("repetition_penalty", "must be in (0, 10]");
  }
  if (!(frequency_penalty >= -2.0 && frequency_penalty <= 2.0)) return bad("frequency_penalty", "must be in [-2, 2]");
  if (!(presence_penalty >= -2.0 && presence_penalty <= 2.0)) return bad("presence_penalty", "must be in [-2, 2]");
  if (max_tokens < 1) return bad("max_tokens", "must be at least 1");
  if (max_tokens > kMaxMaxTokens) return bad("max_tokens", StrCat("must be at most ", kMaxMaxTokens));
  // vLLM's wording.
  if (min_tokens < 0) return bad("min_tokens", StrCat("must be greater than or equal to 0, got ", min_tokens, "."));
  if (min_tokens > max_tokens) {
    return bad("min_tokens", StrCat("must be less than or equal to max_tokens=", max_tokens, ", got ", min_tokens, "."));
  }
  for (const auto& [id, bias] : logit_bias) {
    if (!(bias >= -100.0f && bias <= 100.0f)) return bad("logit_bias", StrCat("of token id ", id, " must be in [-100, 100]"));
  }
  for (const std::string& s : stop) {
    if (s.empty()) return bad("stop", "strings must not be empty");
  }
  if (top_logprobs < 0 || top_logprobs > kMaxTopLogprobs) {
    return bad("top_logprobs", StrCat("must be in [0, ", kMaxTopLogprobs, "]"));
  }
  if (stop.size() > 16) return bad("stop", "takes at most 16 strings");
  if (grammar.size() > kMaxGrammarBytes) {
    return bad("grammar", StrCat("is ", grammar.size(), " bytes, more than the limit of ", kMaxGrammarBytes));
  }
  return absl::OkStatus();
}

}  // namespace infera
