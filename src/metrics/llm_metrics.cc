#include "metrics/llm_metrics.h"

namespace infera {

const std::vector<double>& TimeToFirstTokenBuckets() {
  static const std::vector<double> buckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
                                              1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  return buckets;
}

const std::vector<double>& InterTokenLatencyBuckets() {
  static const std::vector<double> buckets = {0.01, 0.025, 0.05, 0.075, 0.1,  0.15, 0.2,  0.3,  0.4, 0.5,
                                              0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
  return buckets;
}

const std::vector<double>& RequestLatencyBuckets() {
  static const std::vector<double> buckets = {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
                                              30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  return buckets;
}

const std::vector<double>& GrammarTimeBuckets() {
  static const std::vector<double> buckets = {1e-5,   2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
                                              2.5e-3, 5e-3,   1e-2, 2.5e-2, 5e-2,  0.1,  1.0};
  return buckets;
}

const std::vector<std::string>& ConstraintKinds() {
  static const std::vector<std::string> kinds = {"json_object", "json_schema", "regex", "choice",
                                                 "grammar",     "tools",       "other"};
  return kinds;
}

std::vector<double> OneTwoFiveBuckets(int64_t max_value) {
  std::vector<double> buckets;
  // Compared by division: mantissa × scale never overflows.
  for (int64_t scale = 1;; scale *= 10) {
    for (int64_t mantissa : {1, 2, 5}) {
      if (scale > max_value / mantissa) return buckets.empty() ? std::vector<double>{1} : buckets;
      buckets.push_back(static_cast<double>(mantissa * scale));
    }
    if (scale > max_value / 10) return buckets;
  }
}

const char* LlmFinishName(LlmFinish reason) {
  switch (reason) {
    case LlmFinish::kStop:
      return "stop";
    case LlmFinish::kLength:
      return "length";
    case LlmFinish::kAbort:
      return "abort";
    case LlmFinish::kError:
    case LlmFinish::kCount:
      break;
  }
  return "error";
}

LlmMetrics::LlmMetrics(const LlmMetricFamilies& families, const std::string& model, int64_t max_model_len)
    : families_(families) {
  const prometheus::Labels labels = {{"model", model}};
  ttft_ = &families_.time_to_first_token->Add(labels, TimeToFirstTokenBuckets());
  itl_ = &families_.inter_token_latency->Add(labels, InterTokenLatencyBuckets());
  e2e_ = &families_.e2e_latency->Add(labels, RequestLatencyBuckets());
  queue_ = &families_.queue_time->Add(labels, RequestLatencyBuckets());
  prompt_tokens_ = &families_.prompt_tokens->Add(labels);
  generation_tokens_ = &families_.generation_tokens->Add(labels);
  running_ = &families_.running->Add(labels);
  waiting_ = &families_.waiting->Add(labels);
  kv_usage_ = &families_.kv_cache_usage->Add(labels);
  kv_capacity_ = &families_.kv_cache_capacity->Add(labels);
  prefix_queries_ = &families_.prefix_cache_queries->Add(labels);
  prefix_hits_ = &families_.prefix_cache_hits->Add(labels);
  preemptions_ = &families_.preemptions->Add(labels);
  // Every reason exists from the start (at 0), as in vLLM: rate() sees the first one.
  for (int i = 0; i < static_cast<int>(LlmFinish::kCount); ++i) {
    finished_[i] = &families_.requests_finished->Add(
        {{"model", model}, {"finished_reason", LlmFinishName(static_cast<LlmFinish>(i))}});
  }
  const std::vector<double> token_buckets = OneTwoFiveBuckets(max_model_len);
  request_prompt_tokens_ = &families_.request_prompt_tokens->Add(labels, token_buckets);
  request_generation_tokens_ = &families_.request_generation_tokens->Add(labels, token_buckets);
  prefill_ = &families_.request_prefill_time->Add(labels, RequestLatencyBuckets());
  decode_ = &families_.request_decode_time->Add(labels, RequestLatencyBuckets());
  inference_ = &families_.request_inference_time->Add(labels, RequestLatencyBuckets());
  spec_draft_ = &families_.spec_decode_draft_tokens->Add(labels);
  spec_accepted_ = &families_.spec_decode_accepted_tokens->Add(labels);
  spec_emitted_ = &families_.spec_decode_emitted_tokens->Add(labels);
  grammar_time_ = &families_.grammar_mask_time->Add(labels, GrammarTimeBuckets());
  for (const std::string& kind : ConstraintKinds()) {
    constrained_.push_back(&families_.constrained_requests->Add({{"model", model}, {"kind", kind}}));
  }
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
  families_.kv_cache_capacity->Remove(kv_capacity_);
  families_.prefix_cache_queries->Remove(prefix_queries_);
  families_.prefix_cache_hits->Remove(prefix_hits_);
  families_.preemptions->Remove(preemptions_);
  for (prometheus::Counter* counter : finished_) families_.requests_finished->Remove(counter);
  families_.request_prompt_tokens->Remove(request_prompt_tokens_);
  families_.request_generation_tokens->Remove(request_generation_tokens_);
  families_.request_prefill_time->Remove(prefill_);
  families_.request_decode_time->Remove(decode_);
  families_.request_inference_time->Remove(inference_);
  families_.spec_decode_draft_tokens->Remove(spec_draft_);
  families_.spec_decode_accepted_tokens->Remove(spec_accepted_);
  families_.spec_decode_emitted_tokens->Remove(spec_emitted_);
  families_.grammar_mask_time->Remove(grammar_time_);
  for (prometheus::Counter* counter : constrained_) families_.constrained_requests->Remove(counter);
}

}  // namespace infera
