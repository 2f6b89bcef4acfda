// LlmRequest: the engine's state of one generation request.
//
// Created by LlmEngine::AddRequest from a validated prompt and SamplingParams, owned by
// the Scheduler (waiting → running → finished, or back to waiting when preempted), read
// by the sampler on the engine thread. Token ids only: the text is the output
// processor's (output_processor.h), on the output thread.
//
// Token bookkeeping: all_token_ids = prompt + outputs; num_computed_tokens of them have
// their K/V in the cache. A preempted request drops its blocks and starts again from 0
// (recompute; the prefix cache usually returns most blocks at once).
//
// Not thread-safe: engine thread only.
#ifndef INFERA_LLM_LLM_REQUEST_H_
#define INFERA_LLM_LLM_REQUEST_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "api/cancellation.h"
#include "api/generation.h"
#include "llm/scheduler_output.h"

namespace infera::llm {

enum class RequestStatus { kWaiting, kRunning, kFinished };

class GrammarConstraint;  // grammar_constraint.h


struct LlmRequest {
  RequestId id = 0;
  std::vector<int32_t> prompt_token_ids;
  std::vector<int32_t> all_token_ids;  // prompt, then outputs
  int64_t num_computed_tokens = 0;
  SamplingParams sampling;
  int priority = 0;            // lower runs first (vLLM's convention)
  uint64_t arrival_order = 0;  // FCFS tie-breaker
  std::chrono::steady_clock::time_point arrival_time{};
  std::chrono::steady_clock::time_point first_scheduled_time{};
  bool reported_scheduled = false;  // the output thread was told of its first step
  RequestStatus status = RequestStatus::kWaiting;
  FinishReason finish_reason = FinishReason::kNone;
  int num_preemptions = 0;
  std::mt19937_64 rng;
  // With sampling.min_tokens: the ids that would end the output (stop_token_ids, and EOS
  // unless ignore_eos), masked by the sampler until min_tokens outputs exist.
  std::vector<int32_t> min_tokens_banned_ids;
  // With sampling.grammar: the request's matcher (the sampler consults and advances it;
  // kept across preemption). Null when unconstrained.
  std::shared_ptr<GrammarConstraint> constraint;
  std::shared_ptr<const CancellationToken> cancellation;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Speculative decoding: tokens proposed to follow all_token_ids (ngram_proposer.h), set
  // by the engine after a step, consumed (scheduled for verification, or dropped) by the
  // scheduler's next Schedule(). Never part of all_token_ids until accepted.
  std::vector<int32_t> draft_token_ids;
  // With a draft model and temperature > 0: the draft's distribution q each draft was
  // drawn from (vocab_size values each, same order), for the verifier's rejection
  // sampling (draft_verifier.h). Empty otherwise; set with draft_token_ids.
  std::vector<std::vector<float>> draft_probs;
  // How many draft tokens to propose next (0: num_speculative_tokens), adapted to the
  // request's acceptance after each verification (llm_engine.cc, VerifyDrafts).
  int32_t num_draft_tokens_wanted = 0;

  int64_t num_tokens() const { return static_cast<int64_t>(all_token_ids.size()); }
  int64_t num_prompt_tokens() const { return static_cast<int64_t>(prompt_token_ids.size()); }
  int64_t num_output_tokens() const { return num_tokens() - num_prompt_tokens(); }
  bool finished() const { return status == RequestStatus::kFinished; }
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLM_REQUEST_H_
