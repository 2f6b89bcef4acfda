// LlmMetrics: the Prometheus series of one LLM (label model), recorded by its engine.
// ServerMetrics also exposes each of them under vLLM's name (vllm_names.h).
//
// Histogram bounds are vLLM's (vllm/v1/metrics/loggers.py), so vLLM dashboards' quantile
// queries read the same resolution: the bucket functions below are the one source for
// both these series and the engine's in-process snapshot (llm/llm_metrics.h).
//
// Thread-safe; recording is lock-free. Series disappear when it is destroyed.
#ifndef INFERA_METRICS_LLM_METRICS_H_
#define INFERA_METRICS_LLM_METRICS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"

namespace infera {

// vLLM's bucket upper bounds (seconds, or tokens); +Inf is implicit.
const std::vector<double>& TimeToFirstTokenBuckets();   // 0.001 … 2560
const std::vector<double>& InterTokenLatencyBuckets();  // 0.01 … 80
const std::vector<double>& RequestLatencyBuckets();     // 0.3 … 7680: e2e, queue, phases
// 1, 2, 5, 10, 20, 50, … up to and including `max_value` (vLLM's build_1_2_5_buckets);
// at least {1}.
std::vector<double> OneTwoFiveBuckets(int64_t max_value);

// How an LLM request ended (label finished_reason: "stop", "length", "abort", "error").
enum class LlmFinish : int { kStop = 0, kLength, kAbort, kError, kCount };
const char* LlmFinishName(LlmFinish reason);

struct LlmMetricFamilies {
  prometheus::Family<prometheus::Histogram>* time_to_first_token;
  prometheus::Family<prometheus::Histogram>* inter_token_latency;
  prometheus::Family<prometheus::Histogram>* e2e_latency;
  prometheus::Family<prometheus::Histogram>* queue_time;
  prometheus::Family<prometheus::Counter>* prompt_tokens;
  prometheus::Family<prometheus::Counter>* generation_tokens;
  prometheus::Family<prometheus::Gauge>* running;
  prometheus::Family<prometheus::Gauge>* waiting;
  prometheus::Family<prometheus::Gauge>* kv_cache_usage;
  prometheus::Family<prometheus::Counter>* prefix_cache_queries;
  prometheus::Family<prometheus::Counter>* prefix_cache_hits;
  prometheus::Family<prometheus::Counter>* preemptions;
  prometheus::Family<prometheus::Counter>* requests_finished;
  prometheus::Family<prometheus::Histogram>* request_prompt_tokens;
  prometheus::Family<prometheus::Histogram>* request_generation_tokens;
  prometheus::Family<prometheus::Histogram>* request_prefill_time;
  prometheus::Family<prometheus::Histogram>* request_decode_time;
  prometheus::Family<prometheus::Histogram>* request_inference_time;
  prometheus::Family<prometheus::Gauge>* kv_cache_capacity;
  prometheus::Family<prometheus::Counter>* spec_decode_draft_tokens;
  prometheus::Family<prometheus::Counter>* spec_decode_accepted_tokens;
  prometheus::Family<prometheus::Counter>* spec_decode_emitted_tokens;
  prometheus::Family<prometheus::Histogram>* grammar_mask_time;
  prometheus::Family<prometheus::Counter>* constrained_requests;
};

// Structured output: the seconds a constrained token spends in its grammar (1e-5 … 1).
const std::vector<double>& GrammarTimeBuckets();
// The bounded values of label `kind` of constrained requests: SamplingParams'
// constraint_kind values, "other" for anything else.
const std::vector<std::string>& ConstraintKinds();

class LlmMetrics {
 public:
  // `max_model_len` bounds the per-request token histograms (1-2-5 buckets up to it).
  LlmMetrics(const LlmMetricFamilies& families, const std::string& model, int64_t max_model_len);
  ~LlmMetrics();
  LlmMetrics(const LlmMetrics&) = delete;
  LlmMetrics& operator=(const LlmMetrics&) = delete;

  void ObserveTimeToFirstToken(double seconds) { ttft_->Observe(seconds); }
  void ObserveInterTokenLatency(double seconds) { itl_->Observe(seconds); }
  void ObserveQueueTime(double seconds) { queue_->Observe(seconds); }
  // A request ended (any reason): its end-to-end latency, its reason, and its prompt
  // and generated token counts.
  void ObserveFinished(LlmFinish reason, double e2e_seconds, int64_t prompt_tokens, int64_t generation_tokens) {
    finished_[static_cast<int>(reason)]->Increment();
    e2e_->Observe(e2e_seconds);
    request_prompt_tokens_->Observe(static_cast<double>(prompt_tokens));
    request_generation_tokens_->Observe(static_cast<double>(generation_tokens));
  }
  // The phases of an ended request that produced a token (seconds): first scheduled →
  // first token, first token → last token, first scheduled → last token.
  void ObservePhases(double prefill_seconds, double decode_seconds, double inference_seconds) {
    prefill_->Observe(prefill_seconds);
    decode_->Observe(decode_seconds);
    inference_->Observe(inference_seconds);
  }
  void AddPromptTokens(double n) { prompt_tokens_->Increment(n); }
  void AddGenerationTokens(double n) { generation_tokens_->Increment(n); }
  void SetRunning(double n) { running_->Set(n); }
  void SetWaiting(double n) { waiting_->Set(n); }
  void SetKvCacheUsage(double ratio) { kv_usage_->Set(ratio); }
  void SetKvCacheCapacityTokens(double tokens) { kv_capacity_->Set(tokens); }
  void AddPrefixCacheQueries(double tokens) { prefix_queries_->Increment(tokens); }
  void AddPrefixCacheHits(double tokens) { prefix_hits_->Increment(tokens); }
  void AddPreemptions(double n) { preemptions_->Increment(n); }
  // Speculative decoding: draft tokens verified, accepted, emitted (accepted + 1 each).
  void AddSpecDecodeTokens(double draft, double accepted, double emitted) {
    spec_draft_->Increment(draft);
    spec_accepted_->Increment(accepted);
    spec_emitted_->Increment(emitted);
  }
  void ObserveGrammarTime(double seconds) { grammar_time_->Observe(seconds); }
  // `kind` is an index into ConstraintKinds().
  void AddConstrainedRequest(size_t kind) { constrained_[kind]->Increment(); }

 private:
  LlmMetricFamilies families_;
  prometheus::Histogram* ttft_;
  prometheus::Histogram* itl_;
  prometheus::Histogram* e2e_;
  prometheus::Histogram* queue_;
  prometheus::Counter* prompt_tokens_;
  prometheus::Counter* generation_tokens_;
  prometheus::Gauge* running_;
  prometheus::Gauge* waiting_;
  prometheus::Gauge* kv_usage_;
  prometheus::Gauge* kv_capacity_;
  prometheus::Counter* prefix_queries_;
  prometheus::Counter* prefix_hits_;
  prometheus::Counter* preemptions_;
  std::array<prometheus::Counter*, static_cast<int>(LlmFinish::kCount)> finished_;
  prometheus::Histogram* request_prompt_tokens_;
  prometheus::Histogram* request_generation_tokens_;
  prometheus::Histogram* prefill_;
  prometheus::Histogram* decode_;
  prometheus::Histogram* inference_;
  prometheus::Counter* spec_draft_;
  prometheus::Counter* spec_accepted_;
  prometheus::Counter* spec_emitted_;
  prometheus::Histogram* grammar_time_;
  std::vector<prometheus::Counter*> constrained_;
};

}  // namespace infera

#endif  // INFERA_METRICS_LLM_METRICS_H_
