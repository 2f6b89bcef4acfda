#include "llm/llm_engine.h"

#include <limits>
#include <random>

#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "llm/sampler.h"

namespace infera::llm {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

LlmEngine::LlmEngine(EngineOptions options, std::unique_ptr<ModelRunner> runner,
                     const Tokenizer* tokenizer)
    : options_(std::move(options)),
      runner_(std::move(runner)),
      tokenizer_(tokenizer),
      metrics_(options_.metrics_series),
      kv_(options_.num_blocks, options_.block_size, options_.enable_prefix_caching),
      scheduler_(options_.scheduler, &kv_) {}

absl::StatusOr<std::unique_ptr<LlmEngine>> LlmEngine::Create(EngineOptions options,
                                                             std::unique_ptr<ModelRunner> runner,
                                                             const Tokenizer* tokenizer) {
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
  std::unique_ptr<LlmEngine> engine(new LlmEngine(std::move(options), std::move(runner), tokenizer));
  engine->metrics_.SetKvCacheShape(engine->options_.num_blocks, engine->options_.block_size);
  engine->thread_ = std::thread([e = engine.get()] { e->Loop(); });
  return engine;
}

LlmEngine::~LlmEngine() { Shutdown(); }

void LlmEngine::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
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
  auto r = std::make_unique<LlmRequest>();
  r->prompt_token_ids = std::move(request.prompt_token_ids);
  r->all_token_ids = r->prompt_token_ids;
  r->sampling = std::move(request.sampling);
  r->priority = request.priority;
  r->arrival_time = request.arrival_time;
  r->cancellation = std::move(request.cancellation);
  r->rng.seed(r->sampling.seed ? *r->sampling.seed : std::random_device{}());
  if (r->sampling.min_tokens > 0) {
    r->min_tokens_banned_ids = r->sampling.stop_token_ids;
    if (!r->sampling.ignore_eos) {
      const auto& eos = options_.scheduler.eos_token_ids;
      r->min_tokens_banned_ids.insert(r->min_tokens_banned_ids.end(), eos.begin(), eos.end());
    }
  }
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the LLM engine is shutting down");
  if (num_queued_ + inbox_.size() >= options_.max_waiting_requests) {
    return absl::ResourceExhaustedError(StrCat("the LLM engine has ", options_.max_waiting_requests,
                                               " requests waiting; try again later"));
  }
  r->id = next_id_++;
  r->arrival_order = r->id;
  inbox_.push_back({std::move(r), std::move(callback)});
  return absl::OkStatus();
}

void LlmEngine::Loop() {
  while (true) {
    std::vector<Pending> incoming;
    bool stop = false;
    {
      absl::MutexLock lock(&mu_);
      if (!scheduler_.HasUnfinished()) {
        mu_.Await(absl::Condition(
            +[](LlmEngine* e) ABSL_NO_THREAD_SAFETY_ANALYSIS { return e->stopping_ || !e->inbox_.empty(); },
            this));
      }
      incoming.swap(inbox_);
      stop = stopping_;
    }
    Admit(std::move(incoming));
    if (stop) {
      for (RequestId id : scheduler_.AllRequestIds()) End(id, FinishReason::kAbort, absl::OkStatus(), true);
      RecordState();
      return;
    }
    SweepCancelled();
    if (scheduler_.HasUnfinished()) Step();
    RecordState();  // after the step and its deliveries (stop strings finish requests there)
    absl::MutexLock lock(&mu_);
    num_queued_ = scheduler_.num_waiting();
  }
}

void LlmEngine::Admit(std::vector<Pending> incoming) {
  for (Pending& p : incoming) {
    Stream s;
    s.callback = std::move(p.callback);
    s.text = std::make_unique<TextStream>(*tokenizer_, p.request->sampling);
    s.arrival = p.request->arrival_time;
    s.num_prompt_tokens = p.request->num_prompt_tokens();
    s.cancellation = p.request->cancellation;
    s.logprobs = p.request->sampling.logprobs;
    streams_.emplace(p.request->id, std::move(s));
    scheduler_.AddRequest(std::move(p.request));
  }
}

void LlmEngine::SweepCancelled() {
  std::vector<RequestId> cancelled;
  for (const auto& [id, s] : streams_) {
    if (s.cancellation && s.cancellation->IsCancelled()) cancelled.push_back(id);
  }
  for (RequestId id : cancelled) End(id, FinishReason::kAbort, absl::OkStatus(), true);
}

void LlmEngine::End(RequestId id, FinishReason reason, absl::Status error, bool finish_in_scheduler) {
  if (finish_in_scheduler) scheduler_.Finish(id, reason);
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  Stream& s = it->second;
  RequestOutput out;
  if (reason != FinishReason::kAbort && reason != FinishReason::kError) out.text = s.text->Finish();
  out.finish_reason = reason;
  out.error = std::move(error);
  out.num_prompt_tokens = s.num_prompt_tokens;
  out.num_output_tokens = s.num_output_tokens;
  out.num_cached_tokens = std::max<int64_t>(0, s.num_cached_tokens);
  out.queue_seconds = s.queue_seconds;
  RecordEnded(s, reason, Clock::now());
  OutputCallback callback = std::move(s.callback);
  streams_.erase(it);
  callback(std::move(out));
}

void LlmEngine::Step() {
  SchedulerOutput step = scheduler_.Schedule();
  if (step.empty()) {
    // Nothing fits even with an idle cache: cannot happen for requests AddRequest
    // accepted, but never spin on it.
    for (RequestId id : scheduler_.AllRequestIds()) {
      End(id, FinishReason::kError, absl::ResourceExhaustedError("request does not fit in the KV cache"), true);
    }
    return;
  }
  const Clock::time_point now = Clock::now();
  for (const ScheduledSequence& seq : step.sequences) {
    auto it = streams_.find(seq.request_id);
    if (it != streams_.end() && it->second.num_cached_tokens < 0) {
      it->second.num_cached_tokens = seq.start_position;
      it->second.scheduled = now;
      it->second.queue_seconds = Seconds(it->second.arrival, now);
      metrics_.RecordScheduled(it->second.queue_seconds);
    }
  }
  absl::StatusOr<ModelRunnerOutput> result = runner_->Execute(step);
  if (!result.ok()) {
    INFERA_LOG(ERROR) << "LLM step failed: " << result.status().message();
    kv_.ResetPrefixCache();  // blocks cached in this step hold no valid K/V
    for (const ScheduledSequence& seq : step.sequences) End(seq.request_id, FinishReason::kError, result.status(), true);
    return;
  }
  std::vector<SampledToken> sampled;
  size_t row = 0;
  for (const ScheduledSequence& seq : step.sequences) {
    if (!seq.sample) continue;
    LlmRequest* r = scheduler_.Find(seq.request_id);
    float* logits = result->logits.data() + row++ * result->vocab_size;
    sampled.push_back(r ? Sampler::Sample(logits, result->vocab_size, *r) : SampledToken{});
  }
  std::vector<RequestUpdate> updates = scheduler_.Update(step, sampled);
  metrics_.RecordPreemptions(static_cast<int64_t>(step.preempted.size()));
  Deliver(updates);
}

void LlmEngine::Deliver(const std::vector<RequestUpdate>& updates) {
  const Clock::time_point now = Clock::now();
  for (const RequestUpdate& u : updates) {
    auto it = streams_.find(u.id);
    if (it == streams_.end() || !u.token) continue;
    Stream& s = it->second;
    if (s.num_output_tokens == 0) {
      s.first_token = now;
      metrics_.RecordFirstToken(Seconds(s.arrival, now), s.num_prompt_tokens);
    } else {
      metrics_.RecordNextToken(Seconds(s.last_token, now));
    }
    s.last_token = now;
    ++s.num_output_tokens;
    TextStream::Piece piece = s.text->Push(u.token->token_id);
    FinishReason reason = u.finish_reason;
    if (piece.stopped && reason == FinishReason::kNone) {
      reason = FinishReason::kStop;
      scheduler_.Finish(u.id, reason);
    }
    RequestOutput out;
    out.text = std::move(piece.text);
    out.token_ids.push_back(u.token->token_id);
    if (s.logprobs) out.logprobs.push_back(u.token->logprob);
    if (!u.token->top.empty()) out.top_logprobs.push_back(u.token->top);
    out.num_prompt_tokens = s.num_prompt_tokens;
    out.num_output_tokens = s.num_output_tokens;
    out.num_cached_tokens = std::max<int64_t>(0, s.num_cached_tokens);
    if (reason == FinishReason::kNone) {
      s.callback(std::move(out));
      continue;
    }
    // Last output: this token's text plus whatever the stream held back.
    if (!piece.stopped) out.text += s.text->Finish();
    out.finish_reason = reason;
    out.queue_seconds = s.queue_seconds;
    RecordEnded(s, reason, now);
    OutputCallback callback = std::move(s.callback);
    streams_.erase(it);
    callback(std::move(out));
  }
}

void LlmEngine::RecordEnded(const Stream& s, FinishReason reason, Clock::time_point now) {
  EndedRequest ended;
  ended.reason = reason;
  ended.e2e_seconds = Seconds(s.arrival, now);
  ended.prompt_tokens = s.num_prompt_tokens;
  ended.generation_tokens = s.num_output_tokens;
  if (s.num_output_tokens > 0) {
    ended.prefill_seconds = Seconds(s.scheduled, s.first_token);
    ended.decode_seconds = Seconds(s.first_token, s.last_token);
    ended.inference_seconds = Seconds(s.scheduled, s.last_token);
  }
  metrics_.RecordFinished(ended);
}

void LlmEngine::RecordState() {
  const BlockPool& pool = kv_.pool();
  metrics_.RecordState(kv_.prefix_cache_queries(), kv_.prefix_cache_hits(),
                       static_cast<int64_t>(scheduler_.num_running()), static_cast<int64_t>(scheduler_.num_waiting()),
                       pool.num_blocks() - pool.num_free_blocks());
}

}  // namespace infera::llm
