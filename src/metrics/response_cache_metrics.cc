#include "metrics/response_cache_metrics.h"

#include <string_view>

#include "common/str_cat.h"

namespace infera {
namespace {

void Family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

// A label value in the exposition format: backslash, double quote and newline escaped.
std::string LabelValue(std::string_view value) {
  std::string escaped;
  escaped.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      escaped += '\\';
      escaped += c;
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

void PerModel(std::string& out, const std::vector<ResponseCacheModelReading>& models, std::string_view name,
              std::string_view help, uint64_t (*value)(const ResponseCacheModelReading&)) {
  Family(out, name, "counter", help);
  for (const ResponseCacheModelReading& m : models) {
    out += StrCat(name, "{model=\"", LabelValue(m.model), "\",version=\"", m.version, "\"} ", value(m), "\n");
  }
}

void Single(std::string& out, std::string_view name, std::string_view type, std::string_view help, uint64_t value) {
  Family(out, name, type, help);
  out += StrCat(name, " ", value, "\n");
}

}  // namespace

void AppendResponseCacheMetrics(const ResponseCacheReading& cache, const std::vector<ResponseCacheModelReading>& models,
                                std::string& out) {
  // Triton's names, types and units (microseconds).
  PerModel(out, models, "nv_cache_num_hits_per_model", "Number of cache hits per model",
           [](const ResponseCacheModelReading& m) { return m.hits; });
  PerModel(out, models, "nv_cache_hit_duration_per_model", "Total cache hit duration per model, in microseconds",
           [](const ResponseCacheModelReading& m) { return m.hit_ns / 1000; });
  PerModel(out, models, "nv_cache_num_misses_per_model", "Number of cache misses per model",
           [](const ResponseCacheModelReading& m) { return m.misses; });
  PerModel(out, models, "nv_cache_miss_duration_per_model",
           "Total cache miss (insert+lookup) duration per model, in microseconds",
           [](const ResponseCacheModelReading& m) { return m.miss_ns / 1000; });
  // infera's view of the store.
  Single(out, "infera_response_cache_entries", "gauge", "Answers held by the response cache.", cache.entries);
  Single(out, "infera_response_cache_bytes", "gauge", "Bytes charged to the answers the response cache holds.",
         cache.bytes);
  Single(out, "infera_response_cache_capacity_bytes", "gauge", "The response cache's bound (--cache-config size).",
         cache.capacity_bytes);
  Single(out, "infera_response_cache_lookups_total", "counter", "Response cache lookups, all models.", cache.lookups);
  Single(out, "infera_response_cache_hits_total", "counter", "Response cache lookups that hit, all models.",
         cache.hits);
  Single(out, "infera_response_cache_insertions_total", "counter", "Answers inserted into the response cache.",
         cache.insertions);
  Single(out, "infera_response_cache_evictions_total", "counter",
         "Answers evicted (least recently used) to make room for new ones.", cache.evictions);
  Single(out, "infera_response_cache_refused_too_large_total", "counter",
         "Answers not cached because one alone is larger than the cache.", cache.refused_too_large);
}

}  // namespace infera
