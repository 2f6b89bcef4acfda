// VerifyDraftTokens: speculative decoding's acceptance step (docs/speculative_decoding.md)
// — which of a request's draft tokens the target model accepts, given its logits at the
// last sampled token and at every draft token (one batched step: model_runner.h).
//
// Row i holds the target's logits for the position after draft i - 1 (row 0: after the
// last sampled token). For i = 0, 1, …: a token is sampled from row i exactly as without
// speculation (Sampler::Sample: penalties, min_tokens, temperature, top-k/p, min-p,
// logprobs — with the accepted drafts already counted as output tokens); it is emitted;
// if it equals draft i the draft is accepted and row i + 1 is next, else verification
// stops. After k accepted drafts the last row gives the bonus token. So 1 to k + 1
// tokens are emitted: the accepted drafts, then the first token that differs (or the
// bonus).
//
// Why this is exact: greedy picks the argmax at each row, which is what sequential
// decoding would pick given the same (accepted) prefix — identical output. With
// temperature > 0 it is the standard rejection sampling (accept draft d with probability
// min(1, p(d) / q(d)); on rejection draw from norm(max(0, p − q))) for a proposer whose
// q is a point mass on d, as n-gram lookup is: drawing t ~ p and accepting iff t = d
// accepts with probability p(d), and a rejected t is distributed as p restricted to
// t ≠ d, renormalised — which is norm(max(0, p − q)). The output distribution is the
// target's. (A seeded request draws differently with and without speculation.)
//
// With a draft model (draft_model_proposer.h) a sampled request's drafts come from the
// draft's distribution q (kept per draft in `draft_probs`), and the verifier runs the
// general rule: p = the target's distribution at row i (Sampler::Distribution: the same
// penalties and truncation as Sample()); accept draft d with probability
// min(1, p(d) / q(d)); on rejection emit a token drawn from norm(max(0, p − q)) (from p
// when that is all zero, i.e. p = q) and stop; after k accepted drafts the last row
// gives the bonus token (Sampler::Sample). The emitted tokens have the target's
// distribution whatever q is (Leviathan et al. 2023, Chen et al. 2023). Greedy
// requests, and draft_probs null (n-gram drafts: q a point mass), use the rule above,
// which is that rule for those q.
//
// Not thread-safe: the engine thread, with the request's RNG.
#ifndef INFERA_LLM_DRAFT_VERIFIER_H_
#define INFERA_LLM_DRAFT_VERIFIER_H_

#include <cstdint>
#include <vector>

#include "llm/llm_request.h"
#include "llm/scheduler.h"

namespace infera::llm {

// `logits`: drafts.size() + 1 rows of vocab_size, used as scratch. `request` is left as
// it was (the accepted drafts are appended by Scheduler::Update).
// `draft_probs`: null, or one distribution (vocab_size values) per draft: the proposer's
// q for a sampled request.
std::vector<SampledToken> VerifyDraftTokens(float* logits, int64_t vocab_size, const std::vector<int32_t>& drafts,
                                            LlmRequest& request,
                                            const std::vector<std::vector<float>>* draft_probs = nullptr);

}  // namespace infera::llm

#endif  // INFERA_LLM_DRAFT_VERIFIER_H_
