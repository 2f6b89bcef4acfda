#include "llm/scheduler.h"

#include <algorithm>
#include <utility>

namespace infera::llm {

Scheduler::Scheduler(SchedulerConfig config, KvCacheManager* kv_cache)
    : config_(std::move(config)), kv_(kv_cache) {}

void Scheduler::AddRequest(std::unique_ptr<LlmRequest> request) {
  request->status = RequestStatus::kWaiting;
  waiting_.push_back(request.get());
  requests_[request->id] = std::move(request);
}

LlmRequest* Scheduler::Find(RequestId id) {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second.get();
}

std::vector<RequestId> Scheduler::AllRequestIds() const {
  std::vector<RequestId> ids;
  for (const LlmRequest* r : running_) ids.push_back(r->id);
  for (const LlmRequest* r : waiting_) ids.push_back(r->id);
  return ids;
}

bool Scheduler::Before(const LlmRequest& a, const LlmRequest& b) const {
  if (config_.policy == SchedulingPolicy::kPriority && a.priority != b.priority) {
    return a.priority < b.priority;
  }
  return a.arrival_order < b.arrival_order;
}

size_t Scheduler::BestWaiting() const {
  if (config_.policy == SchedulingPolicy::kFcfs) return 0;  // preempted ones sit in front
  size_t best = 0;
  for (size_t i = 1; i < waiting_.size(); ++i) {
    if (Before(*waiting_[i], *waiting_[best])) best = i;
  }
  return best;
}

void Scheduler::Preempt(size_t index) {
  LlmRequest* r = running_[index];
  running_.erase(running_.begin() + static_cast<ptrdiff_t>(index));
  kv_->Free(*r);
  r->num_computed_tokens = 0;
  r->draft_token_ids.clear();
  r->status = RequestStatus::kWaiting;
  ++r->num_preemptions;
  ++num_preemptions_;
  waiting_.push_front(r);
}

void Scheduler::Emit(SchedulerOutput& out, const LlmRequest& r, int64_t start, int64_t n,
                     const std::vector<int32_t>& drafts) const {
  ScheduledSequence seq;
  seq.request_id = r.id;
  seq.token_ids.assign(r.all_token_ids.begin() + start, r.all_token_ids.begin() + start + n);
  seq.token_ids.insert(seq.token_ids.end(), drafts.begin(), drafts.end());
  seq.start_position = start;
  seq.block_ids = kv_->BlockIds(r.id);
  seq.sample = start + n == r.num_tokens();
  seq.num_draft_tokens = static_cast<int32_t>(drafts.size());
  out.sequences.push_back(std::move(seq));
  out.num_scheduled_tokens += n + static_cast<int64_t>(drafts.size());
}

int64_t Scheduler::DraftsToSchedule(const LlmRequest& r, int64_t n, int64_t budget) const {
  if (r.draft_token_ids.empty() || n != 1 || r.num_tokens() - r.num_computed_tokens != 1) return 0;
  // A step emits at most drafts + 1 tokens: no draft past max_tokens or max_model_len.
  const int64_t by_length = std::min(r.sampling.max_tokens - r.num_output_tokens(),
                                     config_.max_model_len - r.num_tokens()) - 1;
  return std::max<int64_t>(
      0, std::min({static_cast<int64_t>(r.draft_token_ids.size()), budget - n, by_length}));
}

void Scheduler::ScheduleRunning(SchedulerOutput& out, int64_t& budget,
                                std::vector<LlmRequest*>& scheduled) {
  size_t i = 0;
  while (i < running_.size() && budget > 0) {
    LlmRequest* r = running_[i];
    const int64_t n = std::min(r->num_tokens() - r->num_computed_tokens, budget);
    if (n <= 0) {
      ++i;
      continue;
    }
    // Proposals are for this step only: whatever is not scheduled now is dropped.
    const int64_t num_drafts = DraftsToSchedule(*r, n, budget);
    std::vector<int32_t> drafts = std::exchange(r->draft_token_ids, {});
    drafts.resize(static_cast<size_t>(num_drafts));
    bool fits = false;
    while (!fits) {
      if (kv_->Allocate(*r, r->num_computed_tokens, n, nullptr, static_cast<int64_t>(drafts.size()))) {
        fits = true;
        break;
      }
      // Victim: FCFS the latest admitted; priority the worst (priority, arrival).
      size_t victim = running_.size() - 1;
      if (config_.policy == SchedulingPolicy::kPriority) {
        for (size_t k = 0; k < running_.size(); ++k) {
          if (Before(*running_[victim], *running_[k])) victim = k;
        }
      }
      LlmRequest* v = running_[victim];
      if (auto it = std::find(scheduled.begin(), scheduled.end(), v); it != scheduled.end()) {
        const size_t pos = static_cast<size_t>(it - scheduled.begin());
        budget += static_cast<int64_t>(out.sequences[pos].token_ids.size());
        out.num_scheduled_tokens -= static_cast<int64_t>(out.sequences[pos].token_ids.size());
        out.sequences.erase(out.sequences.begin() + static_cast<ptrdiff_t>(pos));
        scheduled.erase(it);
      }
      Preempt(victim);
      out.preempted.push_back(v->id);
      if (v == r) break;
      if (victim < i) --i;
    }
    if (!fits) continue;  // r itself went back to waiting; running_[i] is the next one
    Emit(out, *r, r->num_computed_tokens, n, drafts);
    scheduled.push_back(r);
    budget -= n + static_cast<int64_t>(drafts.size());
    ++i;
  }
}

void Scheduler::ScheduleWaiting(SchedulerOutput& out, int64_t& budget,
                                std::vector<LlmRequest*>& scheduled) {
  while (!waiting_.empty() && budget > 0 &&
         running_.size() < static_cast<size_t>(config_.max_num_seqs)) {
    const size_t w = BestWaiting();
    LlmRequest* r = waiting_[w];
    KvCacheManager::CachedPrefix prefix = kv_->FindCachedPrefix(*r);
    int64_t n = r->num_tokens() - prefix.num_tokens;
    if (!config_.enable_chunked_prefill && n > budget) break;
    n = std::min(n, budget);
    if (!kv_->Allocate(*r, prefix.num_tokens, n, &prefix)) break;
    waiting_.erase(waiting_.begin() + static_cast<ptrdiff_t>(w));
    running_.push_back(r);
    r->status = RequestStatus::kRunning;
    r->num_computed_tokens = prefix.num_tokens;
    if (r->first_scheduled_time == std::chrono::steady_clock::time_point{}) {
      r->first_scheduled_time = std::chrono::steady_clock::now();
    }
    Emit(out, *r, prefix.num_tokens, n);
    scheduled.push_back(r);
    budget -= n;
  }
}

SchedulerOutput Scheduler::Schedule() {
  SchedulerOutput out;
  int64_t budget = config_.max_num_batched_tokens;
  std::vector<LlmRequest*> scheduled;
  ScheduleRunning(out, budget, scheduled);
  if (out.preempted.empty()) ScheduleWaiting(out, budget, scheduled);
  return out;
}

FinishReason Scheduler::StopReason(const LlmRequest& r) const {
  const int32_t last = r.all_token_ids.back();
  const auto& eos = config_.eos_token_ids;
  if (!r.sampling.ignore_eos && std::find(eos.begin(), eos.end(), last) != eos.end()) {
    return FinishReason::kStop;
  }
  const auto& stops = r.sampling.stop_token_ids;
  if (std::find(stops.begin(), stops.end(), last) != stops.end()) return FinishReason::kStop;
  if (r.num_output_tokens() >= r.sampling.max_tokens) return FinishReason::kLength;
  if (r.num_tokens() >= config_.max_model_len) return FinishReason::kLength;
  return FinishReason::kNone;
}

std::vector<RequestUpdate> Scheduler::Update(const SchedulerOutput& step,
                                             const std::vector<SampledToken>& sampled) {
  std::vector<std::vector<SampledToken>> one_each;
  one_each.reserve(sampled.size());
  for (const SampledToken& t : sampled) one_each.push_back({t});
  return Update(step, one_each);
}

std::vector<RequestUpdate> Scheduler::Update(const SchedulerOutput& step,
                                             const std::vector<std::vector<SampledToken>>& sampled) {
  std::vector<RequestUpdate> updates;
  size_t k = 0;
  for (const ScheduledSequence& seq : step.sequences) {
    LlmRequest* r = Find(seq.request_id);
    const bool has_sample = seq.sample && k < sampled.size() && !sampled[k].empty();
    const std::vector<SampledToken> no_tokens;
    const std::vector<SampledToken>& tokens = has_sample ? sampled[k] : no_tokens;
    if (seq.sample) ++k;
    if (!r || r->finished()) continue;
    // Accepted drafts: the leading emitted tokens equal to the scheduled drafts (the
    // engine's verifier guarantees it; recounted so a mismatch can never count a
    // rejected slot as computed). Rejected drafts' slots stay beyond num_computed_tokens.
    const size_t num_drafts = static_cast<size_t>(seq.num_draft_tokens);
    const size_t first_draft = seq.token_ids.size() - num_drafts;
    size_t accepted = 0;
    while (accepted < num_drafts && accepted + 1 < tokens.size() &&
           tokens[accepted].token_id == seq.token_ids[first_draft + accepted]) {
      ++accepted;
    }
    r->num_computed_tokens = seq.start_position + static_cast<int64_t>(first_draft + accepted);
    if (!has_sample) continue;
    const std::vector<SampledToken> emitted(tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>(accepted + 1));
    Append(*r, emitted, updates);
  }
  return updates;
}

void Scheduler::Append(LlmRequest& r, const std::vector<SampledToken>& tokens, std::vector<RequestUpdate>& updates) {
  for (const SampledToken& token : tokens) {
    r.all_token_ids.push_back(token.token_id);
    const FinishReason reason = StopReason(r);
    updates.push_back({r.id, token, reason});
    if (reason != FinishReason::kNone) {
      Finish(r.id, reason);  // destroys r
      return;
    }
  }
}

void Scheduler::Finish(RequestId id, FinishReason reason) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  LlmRequest* r = it->second.get();
  kv_->Free(*r);
  std::erase(running_, r);
  if (auto w = std::find(waiting_.begin(), waiting_.end(), r); w != waiting_.end()) waiting_.erase(w);
  r->status = RequestStatus::kFinished;
  r->finish_reason = reason;
  requests_.erase(it);
}

}  // namespace infera::llm
