#include "llm/llm_metrics.h"

#include <algorithm>

namespace infera::llm {

LlmMetrics::LlmMetrics(std::shared_ptr<LlmMetricsSeries> series) : series_(std::move(series)) {
  // vLLM's bucket bounds, the same as the Prometheus series'.
  data_.time_to_first_token = Histogram::WithBounds(TimeToFirstTokenBuckets());
  data_.inter_token_latency = Histogram::WithBounds(InterTokenLatencyBuckets());
  data_.e2e_request_latency = Histogram::WithBounds(RequestLatencyBuckets());
  data_.queue_time = data_.e2e_request_latency;
  grammar_.mask_time = Histogram::WithBounds(GrammarTimeBuckets());
}

void LlmMetrics::RecordGrammarTime(double seconds) {
  if (series_) series_->prometheus().ObserveGrammarTime(seconds);
  absl::MutexLock lock(&mu_);
  grammar_.mask_time.Observe(seconds);
}

LlmMetrics::GrammarStats LlmMetrics::grammar_stats() const {
  absl::MutexLock lock(&mu_);
  return grammar_;
}

void LlmMetrics::RecordConstrainedRequest(std::string_view kind) {
  if (series_) {
    const std::vector<std::string>& kinds = ConstraintKinds();
    // An empty kind is a grammar given as such (KServe's parameters, tests).
    const std::string_view k = kind.empty() ? std::string_view("grammar") : kind;
    const auto it = std::find(kinds.begin(), kinds.end() - 1, k);
    series_->prometheus().AddConstrainedRequest(static_cast<size_t>(it - kinds.begin()));
  }
  absl::MutexLock lock(&mu_);
  ++grammar_.constrained_requests;
}

LlmMetrics::~LlmMetrics() {
  if (!series_) return;
  absl::MutexLock lock(&mu_);
  series_->AddRunning(-last_running_);
  series_->AddWaiting(-last_waiting_);
  series_->AddKvBlocks(-last_used_blocks_, -data_.num_kv_blocks);
  series_->AddKvCapacityTokens(-data_.num_kv_blocks * data_.block_size);
}

LlmMetricsSnapshot LlmMetrics::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return data_;
}

void LlmMetrics::SetKvCacheShape(int64_t num_blocks, int64_t block_size) {
  absl::MutexLock lock(&mu_);
  if (series_) {
    series_->AddKvBlocks(0, num_blocks - data_.num_kv_blocks);
    series_->AddKvCapacityTokens(num_blocks * block_size - data_.num_kv_blocks * data_.block_size);
  }
  data_.num_kv_blocks = num_blocks;
  data_.block_size = block_size;
}

void LlmMetrics::RecordScheduled(double queue_seconds) {
  if (series_) series_->prometheus().ObserveQueueTime(queue_seconds);
  absl::MutexLock lock(&mu_);
  data_.queue_time.Observe(queue_seconds);
}

void LlmMetrics::RecordFirstToken(double ttft_seconds, int64_t prompt_tokens) {
  if (series_) {
    series_->prometheus().ObserveTimeToFirstToken(ttft_seconds);
    series_->prometheus().AddPromptTokens(static_cast<double>(prompt_tokens));
    series_->prometheus().AddGenerationTokens(1);
  }
  absl::MutexLock lock(&mu_);
  data_.time_to_first_token.Observe(ttft_seconds);
  data_.prompt_tokens += static_cast<uint64_t>(prompt_tokens);
  ++data_.generation_tokens;
}

void LlmMetrics::RecordNextToken(double inter_token_seconds) {
  if (series_) {
    series_->prometheus().ObserveInterTokenLatency(inter_token_seconds);
    series_->prometheus().AddGenerationTokens(1);
  }
  absl::MutexLock lock(&mu_);
  data_.inter_token_latency.Observe(inter_token_seconds);
  ++data_.generation_tokens;
}

void LlmMetrics::RecordFinished(const EndedRequest& ended) {
  LlmFinish finish = LlmFinish::kError;
  if (ended.reason == FinishReason::kStop) finish = LlmFinish::kStop;
  if (ended.reason == FinishReason::kLength) finish = LlmFinish::kLength;
  if (ended.reason == FinishReason::kAbort) finish = LlmFinish::kAbort;
  if (series_) {
    series_->prometheus().ObserveFinished(finish, ended.e2e_seconds, ended.prompt_tokens, ended.generation_tokens);
    if (ended.generation_tokens > 0) {
      series_->prometheus().ObservePhases(ended.prefill_seconds, ended.decode_seconds, ended.inference_seconds);
    }
  }
  absl::MutexLock lock(&mu_);
  data_.e2e_request_latency.Observe(ended.e2e_seconds);
  if (finish == LlmFinish::kStop) ++data_.requests_finished_stop;
  if (finish == LlmFinish::kLength) ++data_.requests_finished_length;
  if (finish == LlmFinish::kAbort) ++data_.requests_aborted;
  if (finish == LlmFinish::kError) ++data_.requests_failed;
}

void LlmMetrics::RecordPreemptions(int64_t n) {
  if (n <= 0) return;
  if (series_) series_->prometheus().AddPreemptions(static_cast<double>(n));
  absl::MutexLock lock(&mu_);
  data_.preemptions += static_cast<uint64_t>(n);
}

void LlmMetrics::RecordSpecDecode(int64_t num_draft, int64_t num_accepted, int64_t num_emitted) {
  if (series_) {
    series_->prometheus().AddSpecDecodeTokens(static_cast<double>(num_draft), static_cast<double>(num_accepted),
                                              static_cast<double>(num_emitted));
  }
  absl::MutexLock lock(&mu_);
  data_.spec_decode_num_draft_tokens += static_cast<uint64_t>(num_draft);
  data_.spec_decode_num_accepted_tokens += static_cast<uint64_t>(num_accepted);
  data_.spec_decode_num_emitted_tokens += static_cast<uint64_t>(num_emitted);
}

void LlmMetrics::RecordState(int64_t prefix_queries_total, int64_t prefix_hits_total, int64_t running,
                             int64_t waiting, int64_t used_blocks) {
  absl::MutexLock lock(&mu_);
  if (series_) {
    const auto queries = static_cast<uint64_t>(prefix_queries_total), hits = static_cast<uint64_t>(prefix_hits_total);
    if (queries > data_.prefix_cache_queries) {
      series_->prometheus().AddPrefixCacheQueries(static_cast<double>(queries - data_.prefix_cache_queries));
    }
    if (hits > data_.prefix_cache_hits) {
      series_->prometheus().AddPrefixCacheHits(static_cast<double>(hits - data_.prefix_cache_hits));
    }
    if (running != last_running_) series_->AddRunning(running - last_running_);
    if (waiting != last_waiting_) series_->AddWaiting(waiting - last_waiting_);
    if (used_blocks != last_used_blocks_) series_->AddKvBlocks(used_blocks - last_used_blocks_, 0);
  }
  last_running_ = running;
  last_waiting_ = waiting;
  last_used_blocks_ = used_blocks;
  data_.prefix_cache_queries = static_cast<uint64_t>(prefix_queries_total);
  data_.prefix_cache_hits = static_cast<uint64_t>(prefix_hits_total);
  data_.num_running = running;
  data_.num_waiting = waiting;
  data_.kv_cache_usage = data_.num_kv_blocks > 0 ? static_cast<double>(used_blocks) / data_.num_kv_blocks : 0.0;
}

}  // namespace infera::llm
