#include "llm/llm_engine.h"

#include <algorithm>
#include <limits>
#include <random>
#include <utility>

#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "llm/draft_verifier.h"
#include "llm/sampler.h"

namespace infera::llm {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

LlmEngine::LlmEngine(EngineOptions options, std::unique_ptr<ModelRunner> runner,
                     const Tokenizer* tokenizer, std::unique_ptr<DraftModelProposer> draft)
    : options_(std::move(options)),
      runner_(std::move(runner)),
      tokenizer_(tokenizer),
      metrics_(options_.metrics_series),
      proposer_(options_.speculative.enabled() && options_.speculative.method == SpeculativeConfig::Method::kNgram
                    ? std::make_unique<NgramProposer>(options_.speculative.ngram_prompt_lookup_min,
                                                      options_.speculative.ngram_prompt_lookup_max,
                                                      options_.speculative.num_speculative_tokens)
                    : nullptr),
      draft_(options_.speculative.enabled() ? std::move(draft) : nullptr),
      grammars_(tokenizer, runner_->vocab_size(), options_.scheduler.eos_token_ids),
      kv_(options_.num_blocks, options_.block_size, options_.enable_prefix_caching),
      scheduler_(options_.scheduler, &kv_) {}

absl::StatusOr<std::unique_ptr<LlmEngine>> LlmEngine::Create(EngineOptions options,
                                                             std::unique_ptr<ModelRunner> runner,
                                                             const Tokenizer* tokenizer,
                                                             std::unique_ptr<DraftModelProposer> draft) {
  if (options.num_blocks < 1 || options.block_size < 1) {
    return absl::InvalidArgumentError("the KV cache needs at least one block of one token");
  }
  const int64_t capacity = static_cast<int64_t>(options.num_blocks) * options.block_size;
  if (capacity < options.scheduler.max_model_len) {
    return absl::InvalidArgumentError(StrCat(
        "the KV cache holds ", capacity, " tokens (", options.num_blocks, " blocks of ", options.block_size,
        "), less than max_model_len ", options.scheduler.max_model_len,
        "; raise the KV cache memory or lower max_model_len"));
  }
  const bool wants_draft = options.speculative.enabled() &&
                           options.speculative.method == SpeculativeConfig::Method::kDraftModel;
  if (wants_draft != (draft != nullptr)) {
    return absl::InvalidArgumentError(wants_draft ? "speculative_model names a draft model but none was loaded"
                                                  : "a draft model was given without speculative_model naming one");
  }
  if (draft && draft->vocab_size() != runner->vocab_size()) {
    return absl::InvalidArgumentError(StrCat("the draft model's vocabulary (", draft->vocab_size(),
                                             ") is not the target's (", runner->vocab_size(), ")"));
  }
  std::unique_ptr<LlmEngine> engine(
      new LlmEngine(std::move(options), std::move(runner), tokenizer, std::move(draft)));
  engine->metrics_.SetKvCacheShape(engine->options_.num_blocks, engine->options_.block_size);
  LlmEngine* e = engine.get();
  e->output_ = std::make_unique<OutputThread>(*tokenizer, &e->metrics_,
                                              [e](RequestId id) { e->Abort(id); });
  e->thread_ = std::thread([e] { e->Loop(); });
  return engine;
}

LlmEngine::~LlmEngine() { Shutdown(); }

void LlmEngine::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  // The engine thread's last hand-off aborted every request it held: deliver it all.
  if (output_) output_->Stop();
}

absl::Status LlmEngine::AddRequest(GenerateRequest request, OutputCallback callback) {
  RETURN_IF_ERROR(request.sampling.Validate());
  const int64_t n = static_cast<int64_t>(request.prompt_token_ids.size());
  if (n == 0) return absl::InvalidArgumentError("the prompt is empty");
  for (int32_t id : request.prompt_token_ids) {
    if (id < 0 || id >= runner_->vocab_size()) {
      return absl::InvalidArgumentError(
          StrCat("prompt token id ", id, " is outside the vocabulary [0, ", runner_->vocab_size(), ")"));
    }
  }
  std::string out_of_vocab;  // vLLM's check and wording
  for (const auto& [id, bias] : request.sampling.logit_bias) {
    if (id < 0 || id >= runner_->vocab_size()) StrAppend(&out_of_vocab, out_of_vocab.empty() ? "" : ", ", id);
  }
  if (!out_of_vocab.empty()) {
    return absl::InvalidArgumentError(StrCat("token_id(s) [", out_of_vocab,
                                             "] in logit_bias contain out-of-vocab token ids. Vocabulary size: ",
                                             runner_->vocab_size()));
  }
  const int64_t max_len = options_.scheduler.max_model_len;
  // Compared without adding: max_tokens may be anything up to INT64_MAX.
  if (n > max_len || request.sampling.max_tokens > max_len - n) {
    const int64_t requested = request.sampling.max_tokens > std::numeric_limits<int64_t>::max() - n
                                  ? std::numeric_limits<int64_t>::max()
                                  : n + request.sampling.max_tokens;
    return absl::InvalidArgumentError(StrCat(
        "This model's maximum context length is ", max_len, " tokens. However, you requested ", requested,
        " tokens (", n, " in the prompt, ", request.sampling.max_tokens,
        " in the completion). Please reduce the prompt or max_tokens."));
  }
  if (!options_.scheduler.enable_chunked_prefill && n > options_.scheduler.max_num_batched_tokens) {
    return absl::InvalidArgumentError(StrCat("the prompt has ", n, " tokens, more than max_num_batched_tokens ",
                                             options_.scheduler.max_num_batched_tokens,
                                             " with chunked prefill disabled"));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<GrammarConstraint> constraint, CompileConstraint(request.sampling));
  auto r = std::make_unique<LlmRequest>();
  r->constraint = std::move(constraint);
  r->prompt_token_ids = std::move(request.prompt_token_ids);
  r->all_token_ids = r->prompt_token_ids;
  r->sampling = std::move(request.sampling);
  r->priority = request.priority;
  r->arrival_time = request.arrival_time;
  r->cancellation = std::move(request.cancellation);
  r->deadline = request.deadline;
  r->rng.seed(r->sampling.seed ? *r->sampling.seed : std::random_device{}());
  if (r->sampling.min_tokens > 0) {
    r->min_tokens_banned_ids = r->sampling.stop_token_ids;
    if (!r->sampling.ignore_eos) {
      const auto& eos = options_.scheduler.eos_token_ids;
      r->min_tokens_banned_ids.insert(r->min_tokens_banned_ids.end(), eos.begin(), eos.end());
    }
  }
  NewOutputRequest output;
  output.callback = std::move(callback);
  output.sampling = r->sampling;
  output.num_prompt_tokens = n;
  output.arrival = r->arrival_time;
  output.queued = Clock::now();
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the LLM engine is shutting down");
  if (num_queued_ + inbox_.size() >= options_.max_waiting_requests) {
    return absl::ResourceExhaustedError(StrCat("the LLM engine has ", options_.max_waiting_requests,
                                               " requests waiting; try again later"));
  }
  r->id = next_id_++;
  r->arrival_order = r->id;
  output.id = r->id;
  if (r->constraint) metrics_.RecordConstrainedRequest(r->sampling.constraint_kind);
  inbox_.push_back({std::move(r), std::move(output)});
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<GrammarConstraint>> LlmEngine::CompileConstraint(const SamplingParams& sampling) {
  if (sampling.grammar.empty()) return nullptr;
  return grammars_.Compile(sampling.grammar, &metrics_);
}

void LlmEngine::Abort(RequestId id) {
  absl::MutexLock lock(&mu_);
  aborts_.push_back(id);
}

void LlmEngine::Loop() {
  while (true) {
    std::vector<Pending> incoming;
    std::vector<RequestId> aborted;
    bool stop = false;
    {
      absl::MutexLock lock(&mu_);
      if (!scheduler_.HasUnfinished()) {
        mu_.Await(absl::Condition(
            +[](LlmEngine* e) ABSL_NO_THREAD_SAFETY_ANALYSIS { return e->stopping_ || !e->inbox_.empty(); },
            this));
      }
      incoming.swap(inbox_);
      aborted.swap(aborts_);
      stop = stopping_;
    }
    Admit(std::move(incoming));
    // Finished by the output thread (a stop string): free the blocks; it wants nothing more.
    for (RequestId id : aborted) {
      scheduler_.Finish(id, FinishReason::kStop);
      if (draft_) draft_->Release(id);
    }
    if (stop) {
      for (RequestId id : scheduler_.AllRequestIds()) {
        End(id, FinishReason::kAbort, absl::CancelledError("the LLM engine shut down (the model is being unloaded)"));
      }
      HandOff();
      RecordState();
      return;
    }
    SweepStopped();
    if (scheduler_.HasUnfinished()) Step();
    HandOff();
    RecordState();
    absl::MutexLock lock(&mu_);
    num_queued_ = scheduler_.num_waiting();
  }
}

void LlmEngine::Admit(std::vector<Pending> incoming) {
  for (Pending& p : incoming) {
    step_output_.added.push_back(std::move(p.output));
    scheduler_.AddRequest(std::move(p.request));
  }
}

void LlmEngine::SweepStopped() {
  const Clock::time_point now = Clock::now();
  std::vector<std::pair<RequestId, absl::Status>> stopped;
  for (RequestId id : scheduler_.AllRequestIds()) {
    const LlmRequest* r = scheduler_.Find(id);
    if (r->cancellation && r->cancellation->IsCancelled()) {
      stopped.emplace_back(id, absl::CancelledError("request cancelled"));
    } else if (r->deadline && *r->deadline <= now) {
      stopped.emplace_back(id, absl::DeadlineExceededError("the request's deadline passed while it was generating"));
    }
  }
  for (auto& [id, error] : stopped) End(id, FinishReason::kAbort, std::move(error));
}

void LlmEngine::End(RequestId id, FinishReason reason, absl::Status error) {
  scheduler_.Finish(id, reason);
  if (draft_) draft_->Release(id);  // requests finished in Scheduler::Update: ProposeDrafts
  EngineRequestOutput out;
  out.id = id;
  out.finish_reason = reason;
  out.error = std::move(error);
  step_output_.outputs.push_back(std::move(out));
}

void LlmEngine::HandOff() {
  if (step_output_.empty()) return;
  output_->Push(std::exchange(step_output_, EngineStepOutput{}));
}

void LlmEngine::Step() {
  SchedulerOutput step = scheduler_.Schedule();
  if (step.empty()) {
    // Nothing fits even with an idle cache: cannot happen for requests AddRequest
    // accepted, but never spin on it.
    for (RequestId id : scheduler_.AllRequestIds()) {
      End(id, FinishReason::kError, absl::ResourceExhaustedError("request does not fit in the KV cache"));
    }
    return;
  }
  const Clock::time_point now = Clock::now();
  for (const ScheduledSequence& seq : step.sequences) {
    LlmRequest* r = scheduler_.Find(seq.request_id);
    if (r == nullptr || r->reported_scheduled) continue;
    r->reported_scheduled = true;
    step_output_.scheduled.push_back({r->id, now, seq.start_position});
    metrics_.RecordScheduled(Seconds(r->arrival_time, now));
  }
  absl::StatusOr<ModelRunnerOutput> result = runner_->Execute(step);
  if (!result.ok()) {
    INFERA_LOG(ERROR) << "LLM step failed: " << result.status().message();
    kv_.ResetPrefixCache();  // blocks cached in this step hold no valid K/V
    for (const ScheduledSequence& seq : step.sequences) End(seq.request_id, FinishReason::kError, result.status());
    return;
  }
  std::vector<std::vector<SampledToken>> sampled;
  size_t row = 0;
  for (const ScheduledSequence& seq : step.sequences) {
    if (!seq.sample) continue;
    LlmRequest* r = scheduler_.Find(seq.request_id);
    float* logits = result->logits.data() + row * result->vocab_size;
    row += static_cast<size_t>(seq.NumLogitsRows());
    if (r && seq.num_draft_tokens > 0) {
      sampled.push_back(VerifyDrafts(seq, logits, result->vocab_size, *r));
      continue;
    }
    sampled.push_back({r ? Sampler::Sample(logits, result->vocab_size, *r) : SampledToken{}});
  }
  std::vector<RequestUpdate> updates = scheduler_.Update(step, sampled);
  ProposeDrafts(updates);
  metrics_.RecordPreemptions(static_cast<int64_t>(step.preempted.size()));
  step_output_.time = Clock::now();
  for (RequestUpdate& u : updates) {
    if (!u.token) continue;
    step_output_.outputs.push_back({u.id, std::move(u.token), u.finish_reason, absl::OkStatus()});
  }
}

std::vector<SampledToken> LlmEngine::VerifyDrafts(const ScheduledSequence& seq, float* logits, int64_t vocab_size,
                                                   LlmRequest& request) {
  const std::vector<int32_t> drafts(seq.token_ids.end() - seq.num_draft_tokens, seq.token_ids.end());
  // Draft-model drafts of a sampled request carry the draft's distributions.
  const bool with_q = request.draft_probs.size() >= drafts.size();
  std::vector<SampledToken> emitted =
      VerifyDraftTokens(logits, vocab_size, drafts, request, with_q ? &request.draft_probs : nullptr);
  request.draft_probs.clear();
  const auto emitted_count = static_cast<int64_t>(emitted.size());
  metrics_.RecordSpecDecode(seq.num_draft_tokens, emitted_count - 1, emitted_count);
  // Draft length follows acceptance (Hugging Face's "heuristic" schedule for assisted
  // generation): +2 after a fully accepted run, -1 (down to 1) after a rejection. Each
  // draft costs a full token of compute whether accepted or not, so text the lookup
  // predicts badly should not pay for k of them every step.
  const int32_t k = options_.speculative.num_speculative_tokens;
  const int32_t wanted = request.num_draft_tokens_wanted > 0 ? request.num_draft_tokens_wanted : k;
  request.num_draft_tokens_wanted =
      emitted_count - 1 == seq.num_draft_tokens ? std::min(k, wanted + 2) : std::max(1, wanted - 1);
  return emitted;
}

void LlmEngine::ProposeDrafts(const std::vector<RequestUpdate>& updates) {
  if (!proposer_ && !draft_) return;
  if (draft_) {
    // Finished, aborted and preempted requests give their draft state back.
    draft_->Retain([this](RequestId id) {
      const LlmRequest* r = scheduler_.Find(id);
      return r != nullptr && r->status == RequestStatus::kRunning;
    });
  }
  std::vector<LlmRequest*> wanting;
  std::vector<int32_t> wanted;
  for (size_t i = 0; i < updates.size(); ++i) {
    const RequestUpdate& u = updates[i];
    // A request's updates are adjacent: propose once, after its last token.
    if (u.finish_reason != FinishReason::kNone || (i + 1 < updates.size() && updates[i + 1].id == u.id)) continue;
    LlmRequest* r = scheduler_.Find(u.id);
    // Constrained requests decode one token per step: a draft would need the grammar
    // matcher at every draft position (docs/structured_output.md).
    if (r == nullptr || !r->sampling.grammar.empty()) continue;
    if (draft_) {
      wanting.push_back(r);
      wanted.push_back(r->num_draft_tokens_wanted > 0 ? r->num_draft_tokens_wanted
                                                      : options_.speculative.num_speculative_tokens);
      continue;
    }
    r->draft_token_ids = proposer_->Propose(r->all_token_ids);
    r->draft_probs.clear();
    if (r->num_draft_tokens_wanted > 0 && r->draft_token_ids.size() > static_cast<size_t>(r->num_draft_tokens_wanted)) {
      r->draft_token_ids.resize(static_cast<size_t>(r->num_draft_tokens_wanted));
    }
  }
  if (draft_ && !wanting.empty()) {
    // All requests in one batch per draft step, on this thread.
    if (absl::Status s = draft_->Propose(wanting, wanted); !s.ok()) {
      INFERA_LOG(WARNING) << "draft model step failed (no drafts this step): " << s.message();
    }
  }
}

void LlmEngine::RecordState() {
  const BlockPool& pool = kv_.pool();
  metrics_.RecordState(kv_.prefix_cache_queries(), kv_.prefix_cache_hits(),
                       static_cast<int64_t>(scheduler_.num_running()), static_cast<int64_t>(scheduler_.num_waiting()),
                       pool.num_blocks() - pool.num_free_blocks());
}

}  // namespace infera::llm
