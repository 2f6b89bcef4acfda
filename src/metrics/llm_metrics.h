// LlmMetrics: the Prometheus series of one LLM (label model), recorded by its engine.
//
// Thread-safe; recording is lock-free. Series disappear when it is destroyed.
#ifndef INFERA_METRICS_LLM_METRICS_H_
#define INFERA_METRICS_LLM_METRICS_H_

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"

namespace infera {

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
};

class LlmMetrics {
 public:
  LlmMetrics(const LlmMetricFamilies& families, const std::string& model);
  ~LlmMetrics();
  LlmMetrics(const LlmMetrics&) = delete;
  LlmMetrics& operator=(const LlmMetrics&) = delete;

  void ObserveTimeToFirstToken(double seconds) { ttft_->Observe(seconds); }
  void ObserveInterTokenLatency(double seconds) { itl_->Observe(seconds); }
  void ObserveE2eLatency(double seconds) { e2e_->Observe(seconds); }
  void ObserveQueueTime(double seconds) { queue_->Observe(seconds); }
  void AddPromptTokens(double n) { prompt_tokens_->Increment(n); }
  void AddGenerationTokens(double n) { generation_tokens_->Increment(n); }
  void SetRunning(double n) { running_->Set(n); }
  void SetWaiting(double n) { waiting_->Set(n); }
  void SetKvCacheUsage(double ratio) { kv_usage_->Set(ratio); }
  void AddPrefixCacheQueries(double tokens) { prefix_queries_->Increment(tokens); }
  void AddPrefixCacheHits(double tokens) { prefix_hits_->Increment(tokens); }
  void AddPreemption() { preemptions_->Increment(); }

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
  prometheus::Counter* prefix_queries_;
  prometheus::Counter* prefix_hits_;
  prometheus::Counter* preemptions_;
};

}  // namespace infera

#endif  // INFERA_METRICS_LLM_METRICS_H_
