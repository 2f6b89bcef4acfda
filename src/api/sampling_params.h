// SamplingParams: how one text generation picks its tokens and when it stops (vLLM's names
// and semantics); part of the transport-neutral generation request (api/generation.h). Validate() rejects out-of-range values with a message naming the field.
//
// A value type; thread-safe to copy.
#ifndef INFERA_API_SAMPLING_PARAMS_H_
#define INFERA_API_SAMPLING_PARAMS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace infera {

// The largest max_tokens a request may ask for: the longest max_model_len allowed
// (llm_model_options.h), so no request that fits a model's context is refused for it
// (the OpenAI routes default max_tokens to what is left of the context).
inline constexpr int64_t kMaxMaxTokens = int64_t{1} << 24;
// The most alternatives a request may ask for per token (OpenAI's cap, vLLM's default
// max_logprobs).
inline constexpr int32_t kMaxTopLogprobs = 20;

// The largest grammar (GBNF text) a request may carry, after its schema was compiled.
inline constexpr size_t kMaxGrammarBytes = 1 << 20;

struct SamplingParams {
  double temperature = 1.0;  // 0: greedy
  int64_t top_k = 0;         // 0 or -1: off
  double top_p = 1.0;
  double min_p = 0.0;
  double repetition_penalty = 1.0;  // > 1 discourages tokens seen in prompt or output
  double frequency_penalty = 0.0;   // per occurrence in the output
  double presence_penalty = 0.0;    // once per token present in the output
  std::optional<uint64_t> seed;
  int64_t max_tokens = 16;  // [1, kMaxMaxTokens]
  // [0, max_tokens]: EOS and stop_token_ids cannot be sampled before this many output
  // tokens (vLLM's min_tokens; stop strings still apply, unlike vLLM).
  int64_t min_tokens = 0;
  // (token id, bias) sorted by id, bias in [-100, 100]: added to the token's logit before
  // the penalties (OpenAI's logit_bias). The ids are checked against the model's
  // vocabulary by LlmEngine::AddRequest.
  std::vector<std::pair<int32_t, float>> logit_bias;
  std::vector<std::string> stop;        // stop strings (excluded from the text)
  std::vector<int32_t> stop_token_ids;  // stop tokens (besides EOS)
  bool ignore_eos = false;
  bool include_stop_str_in_output = false;
  bool skip_special_tokens = true;
  bool logprobs = false;  // log-probability of each chosen token
  // With logprobs: also the `top_logprobs` most likely tokens at each step, [0, 20].
  int32_t top_logprobs = 0;
  // Structured output (docs/structured_output.md): the output must be a sentence of this
  // grammar — GBNF text (llama.cpp's notation, start rule `root`) that the frontends build
  // from response_format, guided_json/regex/choice/grammar or tools (src/guided/) and the
  // LLM engine compiles at admission (src/grammar/). Empty: unconstrained.
  std::string grammar;
  // Where the grammar came from, for metrics and traces: json_object, json_schema, regex,
  // choice, grammar or tools; empty when unconstrained.
  std::string constraint_kind;

  absl::Status Validate() const;
  bool greedy() const { return temperature < 1e-5; }
};

}  // namespace infera

#endif  // INFERA_API_SAMPLING_PARAMS_H_
