// vLLM's Prometheus names for infera's LLM series, so that users' vLLM dashboards,
// alerts and autoscaling triggers (KEDA on vllm:num_requests_waiting …) work unchanged.
//
// One measurement, two names: nothing is recorded twice. At scrape time
// AppendVllmFamilies() copies each collected infera_llm_* family under its vLLM name(s)
// (same type, same buckets — infera's LLM buckets are vLLM's: llm_metrics.h), renaming
// the label `model` to vLLM's `model_name` and adding vLLM v1's `engine="0"` (one engine
// per model). The table below is the whole mapping; docs/metrics.md lists it.
//
// Thread-safe (pure functions over their arguments).
#ifndef INFERA_METRICS_VLLM_NAMES_H_
#define INFERA_METRICS_VLLM_NAMES_H_

#include <vector>

#include "prometheus/metric_family.h"

namespace infera {

struct VllmName {
  const char* infera_name;
  const char* vllm_name;
  const char* help;  // vLLM's help text
};

// Every alias, in exposition order. An infera family may have several vLLM names (a
// current one and the one older vLLM releases used).
const std::vector<VllmName>& VllmNames();

// Appends, for each family of `families` that VllmNames() maps and that has series, a
// copy under each of its vLLM names with vLLM's labels (a server without LLMs exports no
// vllm: family). Families not in the table are left alone.
void AppendVllmFamilies(std::vector<prometheus::MetricFamily>& families);

}  // namespace infera

#endif  // INFERA_METRICS_VLLM_NAMES_H_
