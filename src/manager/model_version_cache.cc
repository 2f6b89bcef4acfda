// ModelVersion's use of the response cache (docs/response_cache.md): the lookup before a
// request is queued, and the insert of a miss's answer.
#include <chrono>

#include "common/clock.h"
#include "common/logging.h"
#include "manager/model_version.h"
#include "metrics/triton_metrics.h"

namespace infera {

void ModelVersion::PrepareCacheMetrics() {
  if (cache_ == nullptr || statistics_.metrics() == nullptr) return;
  if (TritonModelSeries* triton = statistics_.metrics()->triton()) triton->PrepareCacheSummaries();
}

ResponseCache* ModelVersion::CacheFor(const Options& options, bool decoupled) {
  if (!options.config->response_cache().enable()) return nullptr;
  if (options.response_cache == nullptr) {
    INFERA_LOG(WARNING) << "model '" << options.config->name() << "' version " << options.version
                        << " enables response_cache but the server has no cache (--cache-config "
                           "local,size=N): its responses are not cached";
    return nullptr;
  }
  if (decoupled) {
    // The config loader refuses response_cache with model_transaction_policy.decoupled
    // (as Triton); this is a backend whose models always are (an LLM).
    INFERA_LOG(WARNING) << "model '" << options.config->name() << "' version " << options.version
                        << " enables response_cache but is decoupled: its responses are not cached";
    return nullptr;
  }
  return options.response_cache;
}

std::optional<ModelVersion::CacheMiss> ModelVersion::LookUpInCache(const InferRequest& request, int64_t rows,
                                                                   InferCallback& callback, bool& answered) {
  const SteadyTime lookup_start = std::chrono::steady_clock::now();
  ResponseCacheKey key = ResponseCacheKey::ForRequest(name(), version_, request, cache_->hash());
  std::shared_ptr<const CachedResponse> hit = cache_->Lookup(key);
  const SteadyTime lookup_end = std::chrono::steady_clock::now();
  if (hit == nullptr) {
    answered = false;
    return CacheMiss{std::move(key), NanosBetween(lookup_start, lookup_end)};
  }
  InferResponse response;
  response.model_name = name();
  response.model_version = version_;
  response.id = request.id;
  response.outputs = hit->outputs;  // shares the entry's immutable bytes
  // Neither queued nor executed: every stage of the trace is the lookup.
  response.timings = {lookup_start, lookup_start, lookup_end, rows, 1};
  statistics_.RecordCacheHit(NanosBetween(request.arrival_time, lookup_end), NanosBetween(lookup_start, lookup_end));
  answered = true;
  callback(std::move(response), ResponseDelivery{});
  return std::nullopt;
}

void ModelVersion::InsertIntoCache(CacheMiss miss, const InferResponse& response) {
  const SteadyTime insert_start = std::chrono::steady_clock::now();
  cache_->Insert(std::move(miss.key), response.outputs);
  statistics_.RecordCacheMiss(miss.lookup_ns + NanosBetween(insert_start, std::chrono::steady_clock::now()));
}

}  // namespace infera
