#include "llm/draft_model_proposer.h"

#include <algorithm>
#include <utility>

#include "llm/sampler.h"

namespace infera::llm {

DraftModelProposer::DraftModelProposer(std::unique_ptr<ModelRunner> runner, int32_t num_blocks, int32_t block_size,
                                       int64_t max_model_len, int64_t max_catch_up_tokens)
    : runner_(std::move(runner)),
      max_model_len_(max_model_len),
      max_catch_up_tokens_(std::max<int64_t>(1, max_catch_up_tokens)),
      kv_(num_blocks, block_size, /*enable_prefix_caching=*/false) {}

void DraftModelProposer::Release(RequestId id) {
  LlmRequest key;  // the cache manager knows requests by id
  key.id = id;
  kv_.Free(key);
  states_.erase(id);
}

void DraftModelProposer::Retain(const std::function<bool(RequestId)>& keep) {
  std::vector<RequestId> gone;
  for (const auto& [id, state] : states_) {
    if (!keep(id)) gone.push_back(id);
  }
  for (RequestId id : gone) Release(id);
}

void DraftModelProposer::Choose(Item& item, float* logits) {
  LlmRequest& r = *item.request;
  const int64_t vocab = runner_->vocab_size();
  // Penalties and min_tokens see the drafts proposed so far as output tokens, as the
  // target's sampler will when it verifies them.
  const size_t num_tokens = r.all_token_ids.size();
  r.all_token_ids.insert(r.all_token_ids.end(), r.draft_token_ids.begin(), r.draft_token_ids.end());
  int32_t token;
  if (r.sampling.greedy()) {
    token = Sampler::GreedyToken(logits, vocab, r);
  } else {
    std::vector<float> q = Sampler::Distribution(logits, vocab, r);
    token = Sampler::DrawFrom(q, r.rng);
    r.draft_probs.push_back(std::move(q));
  }
  r.all_token_ids.resize(num_tokens);
  r.draft_token_ids.push_back(token);
}

void DraftModelProposer::Clear(const std::vector<Item>& items) {
  for (const Item& item : items) {
    item.request->draft_token_ids.clear();
    item.request->draft_probs.clear();
  }
}

absl::Status DraftModelProposer::Propose(const std::vector<LlmRequest*>& requests,
                                         const std::vector<int32_t>& num_tokens) {
  std::vector<Item> items;
  SchedulerOutput step;
  int64_t budget = max_catch_up_tokens_;
  for (size_t i = 0; i < requests.size(); ++i) {
    LlmRequest* r = requests[i];
    r->draft_token_ids.clear();
    r->draft_probs.clear();
    const int64_t n = r->num_tokens();
    // No draft the scheduler could not schedule (scheduler.cc, DraftsToSchedule): the
    // last one fed to the draft sits at position n + wanted - 2 < max_model_len.
    const int64_t wanted = std::min<int64_t>(
        {num_tokens[i], r->sampling.max_tokens - r->num_output_tokens() - 1, max_model_len_ - n - 1});
    if (wanted <= 0 || n == 0) continue;
    auto it = states_.find(r->id);
    if (it != states_.end() && it->second.num_preemptions != r->num_preemptions) {
      Release(r->id);  // preempted since: recompute its context
      it = states_.end();
    }
    if (it == states_.end()) {
      it = states_.emplace(r->id, State{}).first;
      it->second.num_preemptions = r->num_preemptions;
    }
    State& s = it->second;
    const auto common = static_cast<int64_t>(
        std::mismatch(s.cached.begin(), s.cached.end(), r->all_token_ids.begin(), r->all_token_ids.end()).first -
        s.cached.begin());
    const int64_t start = std::min(common, n - 1);  // the last token's logits give draft 1
    if (budget <= 0) continue;  // the step's catch-up budget is spent: no drafts this step
    // A context longer than the budget left: a chunk now (no logits, no drafts), the
    // rest in later steps.
    const bool whole = n - start <= budget;
    const int64_t count = whole ? n - start : budget;
    if (!kv_.Allocate(*r, start, count, nullptr, whole ? wanted - 1 : 0)) continue;  // no room: no drafts
    s.cached.assign(r->all_token_ids.begin(), r->all_token_ids.begin() + start + count);
    ScheduledSequence seq;
    seq.request_id = r->id;
    seq.token_ids.assign(r->all_token_ids.begin() + start, r->all_token_ids.begin() + start + count);
    seq.start_position = start;
    seq.block_ids = kv_.BlockIds(r->id);
    seq.sample = whole;
    budget -= count;
    step.num_scheduled_tokens += count;
    step.sequences.push_back(std::move(seq));
    if (whole) items.push_back({r, static_cast<int32_t>(wanted)});
  }
  // Step j computes draft j + 1 for every item that wants it; step 0 is the catch-up.
  // Logits rows come for sampled sequences only, in order: row k is active[k].
  std::vector<Item*> active;
  for (Item& item : items) active.push_back(&item);
  while (!step.empty()) {
    absl::StatusOr<ModelRunnerOutput> result = runner_->Execute(step);
    if (!result.ok()) {
      Clear(items);
      std::vector<RequestId> all;
      for (const auto& [id, state] : states_) all.push_back(id);
      for (RequestId id : all) Release(id);
      return result.status();
    }
    SchedulerOutput next;
    std::vector<Item*> still;
    for (size_t k = 0; k < active.size(); ++k) {
      Item& item = *active[k];
      Choose(item, result->logits.data() + k * static_cast<size_t>(result->vocab_size));
      LlmRequest& r = *item.request;
      if (static_cast<int32_t>(r.draft_token_ids.size()) >= item.wanted) continue;
      // Feed the draft just chosen: its K/V, and the logits for the next one.
      const int32_t token = r.draft_token_ids.back();
      State& s = states_[r.id];
      ScheduledSequence seq;
      seq.request_id = r.id;
      seq.token_ids = {token};
      seq.start_position = static_cast<int64_t>(s.cached.size());
      seq.block_ids = kv_.BlockIds(r.id);
      seq.sample = true;
      s.cached.push_back(token);
      next.num_scheduled_tokens += 1;
      next.sequences.push_back(std::move(seq));
      still.push_back(&item);
    }
    step = std::move(next);
    active = std::move(still);
  }
  return absl::OkStatus();
}

}  // namespace infera::llm
