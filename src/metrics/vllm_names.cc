#include "metrics/vllm_names.h"

#include <string>
#include <string_view>

namespace infera {

const std::vector<VllmName>& VllmNames() {
  static const std::vector<VllmName> names = {
      {"infera_llm_running_sequences", "vllm:num_requests_running", "Number of requests in model execution batches."},
      {"infera_llm_waiting_sequences", "vllm:num_requests_waiting", "Number of requests waiting to be processed."},
      {"infera_llm_kv_cache_usage_ratio", "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."},
      {"infera_llm_kv_cache_usage_ratio", "vllm:gpu_cache_usage_perc",
       "KV-cache usage (infera: its CPU KV cache). 1 means 100 percent usage. Older vLLM name of "
       "vllm:kv_cache_usage_perc."},
      {"infera_llm_prefix_cache_queries_total", "vllm:prefix_cache_queries_total",
       "Prefix cache queries, in terms of number of queried tokens."},
      {"infera_llm_prefix_cache_hits_total", "vllm:prefix_cache_hits_total",
       "Prefix cache hits, in terms of number of cached tokens."},
      {"infera_llm_preemptions_total", "vllm:num_preemptions_total", "Cumulative number of preemption from the engine."},
      {"infera_llm_prompt_tokens_total", "vllm:prompt_tokens_total", "Number of prefill tokens processed."},
      {"infera_llm_generation_tokens_total", "vllm:generation_tokens_total", "Number of generation tokens processed."},
      {"infera_llm_requests_finished_total", "vllm:request_success_total", "Count of successfully processed requests."},
      {"infera_llm_request_prompt_tokens", "vllm:request_prompt_tokens", "Number of prefill tokens processed."},
      {"infera_llm_request_generation_tokens", "vllm:request_generation_tokens",
       "Number of generation tokens processed."},
      {"infera_llm_time_to_first_token_seconds", "vllm:time_to_first_token_seconds",
       "Histogram of time to first token in seconds."},
      {"infera_llm_inter_token_latency_seconds", "vllm:inter_token_latency_seconds",
       "Histogram of inter-token latency in seconds."},
      {"infera_llm_inter_token_latency_seconds", "vllm:time_per_output_token_seconds",
       "Histogram of time per output token in seconds. Older vLLM name of vllm:inter_token_latency_seconds."},
      {"infera_llm_e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds",
       "Histogram of e2e request latency in seconds."},
      {"infera_llm_queue_time_seconds", "vllm:request_queue_time_seconds",
       "Histogram of time spent in WAITING phase for request."},
      {"infera_llm_request_prefill_time_seconds", "vllm:request_prefill_time_seconds",
       "Histogram of time spent in PREFILL phase for request."},
      {"infera_llm_request_decode_time_seconds", "vllm:request_decode_time_seconds",
       "Histogram of time spent in DECODE phase for request."},
      {"infera_llm_request_inference_time_seconds", "vllm:request_inference_time_seconds",
       "Histogram of time spent in RUNNING phase for request."},
      {"infera_llm_spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_draft_tokens_total",
       "Number of draft tokens."},
      {"infera_llm_spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_total",
       "Number of accepted tokens."},
      {"infera_llm_spec_decode_num_emitted_tokens_total", "vllm:spec_decode_num_emitted_tokens_total",
       "Number of emitted tokens."},
  };
  return names;
}

namespace {

prometheus::MetricFamily AsVllm(const prometheus::MetricFamily& family, const VllmName& name) {
  prometheus::MetricFamily copy = family;
  copy.name = name.vllm_name;
  copy.help = name.help;
  for (prometheus::ClientMetric& metric : copy.metric) {
    for (prometheus::ClientMetric::Label& label : metric.label) {
      if (label.name == "model") label.name = "model_name";
    }
    metric.label.push_back({"engine", "0"});
  }
  return copy;
}

}  // namespace

void AppendVllmFamilies(std::vector<prometheus::MetricFamily>& families) {
  const size_t collected = families.size();
  for (const VllmName& name : VllmNames()) {
    for (size_t i = 0; i < collected; ++i) {
      // A family without series (no LLM loaded) gets no vLLM twin.
      if (families[i].name == name.infera_name && !families[i].metric.empty()) {
        families.push_back(AsVllm(families[i], name));
        break;
      }
    }
  }
}

}  // namespace infera
