// NgramProposer: speculative decoding's draft tokens without a draft model — n-gram
// prompt lookup (vLLM's "[ngram]" proposer; "prompt lookup decoding").
//
// Given a request's tokens (prompt + output so far), it looks for an earlier occurrence
// of their suffix, trying suffix lengths from `max_n` down to `min_n`; at the most recent
// earlier occurrence of the longest suffix that matches, it proposes the tokens that
// followed it, up to `num_tokens`. A match close to the end (a repeating run) is
// continued by copying on through the proposal itself, so a period shorter than
// `num_tokens` still yields a full proposal ("a b a b" → "a b a b …"). No match: nothing
// is proposed and the request decodes one token that step.
//
// Cost: O(len · max_n) per call (len ≤ max_model_len), on the engine thread.
//
// Thread-safe (stateless after construction).
//
// Usage:
//   NgramProposer proposer(/*min_n=*/1, /*max_n=*/4, /*num_tokens=*/5);
//   std::vector<int32_t> draft = proposer.Propose(request.all_token_ids);
#ifndef INFERA_LLM_NGRAM_PROPOSER_H_
#define INFERA_LLM_NGRAM_PROPOSER_H_

#include <cstdint>
#include <span>
#include <vector>

namespace infera::llm {

class NgramProposer {
 public:
  // 1 <= min_n <= max_n, num_tokens >= 1 (validated by llm_model_options).
  NgramProposer(int32_t min_n, int32_t max_n, int32_t num_tokens);

  // The proposed continuation of `tokens` (possibly empty; at most num_tokens).
  std::vector<int32_t> Propose(std::span<const int32_t> tokens) const;

 private:
  const int32_t min_n_;
  const int32_t max_n_;
  const int32_t num_tokens_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_NGRAM_PROPOSER_H_
