#include "llm/llm_metrics_series.h"

#include <map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "metrics/server_metrics.h"

namespace infera::llm {
namespace {

struct Entry {
  std::unique_ptr<LlmMetricsSeries> series;
  int references = 0;
};

using Key = std::pair<ServerMetrics*, std::string>;

absl::Mutex& RegistryMutex() {
  static absl::Mutex mu;
  return mu;
}

std::map<Key, Entry>& Registry() ABSL_EXCLUSIVE_LOCKS_REQUIRED(RegistryMutex()) {
  static auto* registry = new std::map<Key, Entry>();
  return *registry;
}

}  // namespace

std::shared_ptr<LlmMetricsSeries> LlmMetricsSeries::Acquire(ServerMetrics* metrics, const std::string& model,
                                                           int64_t max_model_len) {
  absl::MutexLock lock(&RegistryMutex());
  Key key{metrics, model};
  Entry& entry = Registry()[key];
  if (entry.series == nullptr) entry.series = std::make_unique<LlmMetricsSeries>(metrics->ForLlm(model, max_model_len));
  ++entry.references;
  return std::shared_ptr<LlmMetricsSeries>(entry.series.get(), [key](LlmMetricsSeries*) {
    absl::MutexLock lock(&RegistryMutex());
    auto it = Registry().find(key);
    if (it != Registry().end() && --it->second.references == 0) Registry().erase(it);  // removes the series
  });
}

void LlmMetricsSeries::AddKvBlocks(int64_t used_delta, int64_t total_delta) {
  const int64_t used = kv_used_ += used_delta;
  const int64_t total = kv_total_ += total_delta;
  metrics_->SetKvCacheUsage(total > 0 ? static_cast<double>(used) / static_cast<double>(total) : 0.0);
}

}  // namespace infera::llm
