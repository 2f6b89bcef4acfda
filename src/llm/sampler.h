// Sampler: picks each request's next token from its logits row (vLLM's semantics).
//
// Order: log-probability of the raw distribution (if requested) → repetition penalty
// (tokens in prompt or output: positive logits divided, negative multiplied) →
// frequency/presence penalties (output tokens) → greedy argmax when temperature is 0,
// else temperature → top-k → min-p → top-p → a draw from the request's own RNG (seeded
// by `seed`, so results do not depend on what else is in the batch).
//
// The reported logprob is of the chosen token under the model's raw distribution
// (log-softmax of the logits before penalties and temperature), as vLLM v1 reports by
// default; with top_logprobs = k the k most likely tokens of that same distribution
// come with it (ties: lower id first).
//
// Under a grammar (request.constraint, grammar_constraint.h): greedy and plain
// temperature sampling pick from the unconstrained logits and keep the token when the
// grammar accepts it, else pick again from the logits masked to the allowed tokens (the
// same distribution: docs/structured_output.md); with top_k, top_p or min_p the mask
// comes first. Penalties, logit_bias and min_tokens apply before the mask; when they
// hold back every allowed token the grammar wins (the first allowed id). EOS is allowed
// only where the grammar may end and forced where nothing more can follow (or where no
// token of the vocabulary can continue it). The chosen token advances the matcher.
// Logprobs stay the raw distribution's.
//
// Thread-safe (stateless); the request's RNG and constraint are the engine thread's.
#ifndef INFERA_LLM_SAMPLER_H_
#define INFERA_LLM_SAMPLER_H_

#include <cstdint>
#include <random>
#include <vector>

#include "llm/llm_request.h"
#include "llm/scheduler.h"

namespace infera::llm {

class Sampler {
 public:
  // `logits` (vocab_size values) is used as scratch and left modified.
  static SampledToken Sample(float* logits, int64_t vocab_size, LlmRequest& request);

  // Speculative decoding with a draft model (draft_model_proposer.h, draft_verifier.h):
  // the pieces of Sample() for requests without a grammar.
  //
  // The distribution Sample() draws from when temperature > 0 — penalties, logit_bias,
  // min_tokens, temperature, top-k, min-p, top-p — normalised, vocab_size values (0
  // outside the kept tokens). `logits` is scratch. REQUIRES: !request.sampling.greedy().
  static std::vector<float> Distribution(float* logits, int64_t vocab_size, const LlmRequest& request);
  // Sample()'s greedy choice: the argmax after penalties. `logits` is scratch.
  static int32_t GreedyToken(float* logits, int64_t vocab_size, const LlmRequest& request);
  // A token drawn with probability proportional to `weights` (>= 0, not all 0).
  static int32_t DrawFrom(const std::vector<float>& weights, std::mt19937_64& rng);
  // `token` with the logprob fields Sample() would give it, from the unmodified logits.
  static SampledToken Describe(const float* raw_logits, int64_t vocab_size, int32_t token,
                               const LlmRequest& request);
};

}  // namespace infera::llm

#endif  // INFERA_LLM_SAMPLER_H_
