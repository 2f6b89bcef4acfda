// DraftModelProposer: speculative decoding's draft tokens from a small draft model
// (vLLM's `speculative_model: <dir>`; docs/speculative_decoding.md, "Draft model").
//
// It owns a second ModelRunner (the draft, with its own paged KV cache) and its own
// KvCacheManager (block tables per request, no prefix caching). For every decoding
// request that wants drafts, per engine step, all requests batched in each forward:
//
//   1. catch-up: the tokens the draft has not computed yet — after a verification the
//      accepted drafts and the token sampled after them; for a new request, or after a
//      preemption freed its state, the whole context — from the first position where
//      the draft's cached tokens and the request's differ (a rejected draft's slot is
//      overwritten); always at least the last token, whose logits give draft 1. At
//      most `max_catch_up_tokens` in all per step (the target's token budget): a
//      request whose context does not fit catches up in chunks over several steps,
//      without drafts until it is done (a long prompt never stalls a step);
//   2. k − 1 single-token steps, each feeding the draft just proposed.
//
// Greedy requests take the argmax (after the request's penalties: Sampler::GreedyToken),
// so a draft the target would pick is proposed; sampled ones draw from the draft's
// distribution q under the request's own temperature / top-k / top-p / penalties
// (Sampler::Distribution), and q is kept per draft (LlmRequest::draft_probs) for the
// verifier's rejection sampling (draft_verifier.h). The request's RNG draws.
//
// A request gets at most min(wanted, max_tokens left − 1, max_model_len − len − 1)
// drafts (the scheduler never schedules more: scheduler.h), so the draft never writes a
// position at or past max_model_len. A request whose draft blocks do not fit gets no
// drafts that step. A failed draft forward drops every request's draft state and
// proposes nothing that step (the target decodes on without speculation).
//
// Not thread-safe: the engine thread only (no thread of its own).
//
// Usage (LlmEngine, after Scheduler::Update):
//   proposer.Retain([&](RequestId id) { return is_running(id); });  // frees the rest
//   proposer.Propose(requests_that_want_drafts, wanted_per_request);
#ifndef INFERA_LLM_DRAFT_MODEL_PROPOSER_H_
#define INFERA_LLM_DRAFT_MODEL_PROPOSER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "llm/kv_cache_manager.h"
#include "llm/llm_request.h"
#include "llm/model_runner.h"

namespace infera::llm {

class DraftModelProposer {
 public:
  // `runner`: the draft model, its KV cache allocated for `num_blocks` blocks of
  // `block_size` tokens. `max_model_len`: the target's. `max_catch_up_tokens` (>= 1):
  // the most context tokens one Propose() computes (the target's max_num_batched_tokens).
  DraftModelProposer(std::unique_ptr<ModelRunner> runner, int32_t num_blocks, int32_t block_size,
                     int64_t max_model_len, int64_t max_catch_up_tokens);

  // Sets draft_token_ids (and draft_probs for sampled requests) of each request, at
  // most `num_tokens[i]` drafts for requests[i] (0: none). Requests must be decoding and
  // unconstrained. A failed draft step: every draft state is freed, no request gets
  // drafts, and the error is returned (for the log).
  absl::Status Propose(const std::vector<LlmRequest*>& requests, const std::vector<int32_t>& num_tokens);

  // Frees the draft state of every request for which `keep` is false (finished,
  // aborted, preempted: a preempted request's context is recomputed whole).
  void Retain(const std::function<bool(RequestId)>& keep);
  void Release(RequestId id);

  // Requests with draft state, and the draft cache's free blocks (tests, metrics).
  size_t num_tracked() const { return states_.size(); }
  int32_t num_free_blocks() const { return kv_.pool().num_free_blocks(); }
  int64_t vocab_size() const { return runner_->vocab_size(); }

 private:
  struct State {
    std::vector<int32_t> cached;  // tokens whose K/V the draft cache holds, by position
    int num_preemptions = 0;      // the request's, when the state was made
  };
  // One request's part of the current proposal.
  struct Item {
    LlmRequest* request;
    int32_t wanted;
  };
  // Picks draft j of an item from its logits row (appends to draft_token_ids/probs).
  void Choose(Item& item, float* logits);
  void Clear(const std::vector<Item>& items);

  const std::unique_ptr<ModelRunner> runner_;
  const int64_t max_model_len_;
  const int64_t max_catch_up_tokens_;
  KvCacheManager kv_;
  std::unordered_map<RequestId, State> states_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_DRAFT_MODEL_PROPOSER_H_
