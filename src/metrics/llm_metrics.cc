#include "metrics/llm_metrics.h"

namespace infera {
namespace {
const prometheus::Histogram::BucketBoundaries& TokenLatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return buckets;
}
}  // namespace

LlmMetrics::LlmMetrics(const LlmMetricFamilies& families, const std::string& model)
    : families_(families) {
  const prometheus::Labels labels = {{"model", model}};
  ttft_ = &families_.time_to_first_token->Add(labels, TokenLatencyBuckets());
  itl_ = &families_.inter_token_latency->Add(labels, TokenLatencyBuckets());
  e2e_ = &families_.e2e_latency->Add(labels, TokenLatencyBuckets());
  queue_ = &families_.queue_time->Add(labels, TokenLatencyBuckets());
  prompt_tokens_ = &families_.prompt_tokens->Add(labels);
  generation_tokens_ = &families_.generation_tokens->Add(labels);
  running_ = &families_.running->Add(labels);
  waiting_ = &families_.waiting->Add(labels);
  kv_usage_ = &families_.kv_cache_usage->Add(labels);
  prefix_queries_ = &families_.prefix_cache_queries->Add(labels);
  prefix_hits_ = &families_.prefix_cache_hits->Add(labels);
  preemptions_ = &families_.preemptions->Add(labels);
}

LlmMetrics::~LlmMetrics() {
  families_.time_to_first_token->Remove(ttft_);
  families_.inter_token_latency->Remove(itl_);
  families_.e2e_latency->Remove(e2e_);
  families_.queue_time->Remove(queue_);
  families_.prompt_tokens->Remove(prompt_tokens_);
  families_.generation_tokens->Remove(generation_tokens_);
  families_.running->Remove(running_);
  families_.waiting->Remove(waiting_);
  families_.kv_cache_usage->Remove(kv_usage_);
  families_.prefix_cache_queries->Remove(prefix_queries_);
  families_.prefix_cache_hits->Remove(prefix_hits_);
  families_.preemptions->Remove(preemptions_);
}

}  // namespace infera
