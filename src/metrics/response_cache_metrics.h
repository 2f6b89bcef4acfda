// The response cache's Prometheus families (docs/response_cache.md, docs/metrics.md),
// rendered at scrape time from the statistics the cache and the versions already keep,
// and appended to the exposition (as the API-key families are): Triton's per-model
// nv_cache_* counters and infera's own view of the store.
//
// Emitted only when the server has a cache; the per-model series only for versions that
// use it (Triton: "only create cache metrics if cache is enabled").
//
// Stateless: thread-safe.
#ifndef INFERA_METRICS_RESPONSE_CACHE_METRICS_H_
#define INFERA_METRICS_RESPONSE_CACHE_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace infera {

// One version's cache statistics (its ModelStatistics: cumulative since it loaded).
struct ResponseCacheModelReading {
  std::string model;
  int64_t version = 0;
  uint64_t hits = 0;
  uint64_t hit_ns = 0;
  uint64_t misses = 0;
  uint64_t miss_ns = 0;  // lookup + insert
};

// The store (ResponseCache::Stats).
struct ResponseCacheReading {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t capacity_bytes = 0;
  uint64_t lookups = 0;
  uint64_t hits = 0;
  uint64_t insertions = 0;
  uint64_t evictions = 0;
  uint64_t refused_too_large = 0;
};

// Appends the families in the Prometheus text format to `out`.
void AppendResponseCacheMetrics(const ResponseCacheReading& cache, const std::vector<ResponseCacheModelReading>& models,
                                std::string& out);

}  // namespace infera

#endif  // INFERA_METRICS_RESPONSE_CACHE_METRICS_H_
