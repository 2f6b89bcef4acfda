// Scheduler: continuous batching over a paged KV cache (vLLM v1's scheduler, CPU-sized).
//
// Every engine step, Schedule() builds one batch under a token budget
// (max_num_batched_tokens):
//   1. running requests, in order: the rest of their known tokens (1 for a decoding
//      request; a chunk of a long prompt — chunked prefill mixes with decodes). When the
//      cache has no room, the lowest-priority running request (FCFS: the latest admitted)
//      is preempted — its blocks freed, it goes back to the front of the waiting queue to
//      be recomputed — until the request fits or is itself the victim;
//   2. waiting requests, best first (FCFS: arrival; priority: lower `priority`, then
//      arrival), while the budget, max_num_seqs and the cache allow, each starting after
//      its longest cached prefix. No admissions in a step that preempted.
// Update() then advances every scheduled request by what was computed, appends sampled
// tokens and stops requests on EOS (unless ignore_eos), stop token ids, max_tokens or
// max_model_len.
//
// Speculative decoding (docs/speculative_decoding.md): a decoding request whose
// draft_token_ids the engine filled gets them scheduled after its last sampled token (as
// many as the token budget, max_tokens and max_model_len leave room for; slots allocated
// as lookahead, never prefix-cached). Update() then takes the accepted drafts plus one
// sampled token per such sequence: only the accepted ones count as computed (the slots
// of rejected drafts are written over later), and every stop condition is checked after
// each appended token, so a run stops at the first EOS / stop token / length limit. Stop strings are found by the output processor (on the output thread),
// which has the engine Finish() the request at its next step (LlmEngine::Abort).
//
// Not thread-safe: owned by the engine thread.
#ifndef INFERA_LLM_SCHEDULER_H_
#define INFERA_LLM_SCHEDULER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "llm/kv_cache_manager.h"
#include "llm/llm_request.h"
#include "llm/scheduler_output.h"

namespace infera::llm {

enum class SchedulingPolicy { kFcfs, kPriority };

struct SchedulerConfig {
  int32_t max_num_seqs = 16;
  int64_t max_num_batched_tokens = 512;
  int64_t max_model_len = 2048;
  bool enable_chunked_prefill = true;
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  std::vector<int32_t> eos_token_ids;
};

// One sampled token, for the sequence at the same index among the sampled ones.
struct SampledToken {
  int32_t token_id = 0;
  float logprob = 0.0f;  // of the chosen token; 0 unless requested
  // With SamplingParams::top_logprobs > 0: the most likely tokens, most likely first.
  std::vector<TokenLogprob> top;
};

// What Update() reports for one request that got a token or finished.
struct RequestUpdate {
  RequestId id = 0;
  std::optional<SampledToken> token;
  FinishReason finish_reason = FinishReason::kNone;  // kNone: still running
};

class Scheduler {
 public:
  Scheduler(SchedulerConfig config, KvCacheManager* kv_cache);

  // Takes ownership; the request joins the waiting queue.
  void AddRequest(std::unique_ptr<LlmRequest> request);
  SchedulerOutput Schedule();
  // `sampled`: one entry per sampled sequence, in step order: the tokens the engine
  // emits for it — one, or with draft tokens the accepted drafts (a prefix of the
  // scheduled ones) then the token sampled after them. One RequestUpdate per appended
  // token (several for a request in one step when drafts were accepted).
  std::vector<RequestUpdate> Update(const SchedulerOutput& step, const std::vector<std::vector<SampledToken>>& sampled);
  // Without speculation: one token per sampled sequence.
  std::vector<RequestUpdate> Update(const SchedulerOutput& step, const std::vector<SampledToken>& sampled);
  // Ends a request (stop string, abort, error): frees its blocks, drops it. No-op for
  // unknown ids.
  void Finish(RequestId id, FinishReason reason);

  LlmRequest* Find(RequestId id);
  size_t num_running() const { return running_.size(); }
  size_t num_waiting() const { return waiting_.size(); }
  bool HasUnfinished() const { return !running_.empty() || !waiting_.empty(); }
  int64_t num_preemptions() const { return num_preemptions_; }
  const KvCacheManager& kv_cache() const { return *kv_; }
  // Ids of every request held (running then waiting), for cancellation sweeps.
  std::vector<RequestId> AllRequestIds() const;

 private:
  bool Before(const LlmRequest& a, const LlmRequest& b) const;  // a is served first
  size_t BestWaiting() const;
  void Preempt(size_t running_index);
  void ScheduleRunning(SchedulerOutput& out, int64_t& budget, std::vector<LlmRequest*>& scheduled);
  void ScheduleWaiting(SchedulerOutput& out, int64_t& budget, std::vector<LlmRequest*>& scheduled);
  void Emit(SchedulerOutput& out, const LlmRequest& request, int64_t start, int64_t n,
            const std::vector<int32_t>& drafts = {}) const;
  // How many of the request's draft tokens fit this step (0 unless it is decoding).
  int64_t DraftsToSchedule(const LlmRequest& request, int64_t n, int64_t budget) const;
  // Appends `tokens` to a running request, stopping at the first stop condition.
  void Append(LlmRequest& request, const std::vector<SampledToken>& tokens, std::vector<RequestUpdate>& updates);
  FinishReason StopReason(const LlmRequest& request) const;
  void Remove(RequestId id);

  const SchedulerConfig config_;
  KvCacheManager* kv_;
  std::unordered_map<RequestId, std::unique_ptr<LlmRequest>> requests_;
  std::vector<LlmRequest*> running_;  // admission order
  std::deque<LlmRequest*> waiting_;
  int64_t num_preemptions_ = 0;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_SCHEDULER_H_
