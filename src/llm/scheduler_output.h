// SchedulerOutput: what the scheduler decided for one engine step — the typed hand-off
// Scheduler::Schedule() → ModelRunner::Execute() → Scheduler::Update().
//
// Each scheduled sequence says which tokens to compute this step (a chunk of the prompt,
// the rest of a recomputed sequence, or the one token sampled last step), where they
// start (the tokens before are already in the KV cache), and the block table that maps
// every position to a KV-cache block (position p lives in block_ids[p / block_size] at
// offset p % block_size). A sequence whose chunk reaches the end of its known tokens is
// sampled: the runner returns logits for its last token.
//
// Speculative decoding (docs/speculative_decoding.md): a decoding sequence may carry
// `num_draft_tokens` proposed tokens after its last sampled one. They are computed like
// the others (their K/V written at their positions), and the runner returns logits at
// the sampled token and at every draft token (1 + num_draft_tokens rows, in position
// order), so the engine verifies all proposals with this one step.
//
// Plain values; not thread-safe (built and read on the engine thread).
#ifndef INFERA_LLM_SCHEDULER_OUTPUT_H_
#define INFERA_LLM_SCHEDULER_OUTPUT_H_

#include <cstdint>
#include <vector>

namespace infera::llm {

using RequestId = uint64_t;

struct ScheduledSequence {
  RequestId request_id = 0;
  std::vector<int32_t> token_ids;  // inputs this step, positions start_position...
  int64_t start_position = 0;      // tokens of this sequence already in the KV cache
  std::vector<int32_t> block_ids;  // covers start_position + token_ids.size() positions
  bool sample = false;             // logits for the last token are wanted
  // The last num_draft_tokens of token_ids are speculative (proposed, not yet accepted).
  int32_t num_draft_tokens = 0;
  // Logits rows the runner returns for this sequence: 0, or 1 + num_draft_tokens.
  int64_t NumLogitsRows() const { return sample ? 1 + num_draft_tokens : 0; }
};

struct SchedulerOutput {
  std::vector<ScheduledSequence> sequences;
  int64_t num_scheduled_tokens = 0;
  // Requests preempted (blocks freed, to be recomputed) while building this step.
  std::vector<RequestId> preempted;
  bool empty() const { return sequences.empty(); }
  int64_t NumSampled() const {
    int64_t n = 0;
    for (const auto& s : sequences) n += s.sample ? 1 : 0;
    return n;
  }
  int64_t NumLogitsRows() const {
    int64_t n = 0;
    for (const auto& s : sequences) n += s.NumLogitsRows();
    return n;
  }
};

}  // namespace infera::llm

#endif  // INFERA_LLM_SCHEDULER_OUTPUT_H_
