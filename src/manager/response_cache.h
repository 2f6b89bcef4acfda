// ResponseCache: the process-wide store of Triton's response cache
// (docs/response_cache.md): answers of earlier requests by their ResponseCacheKey, least
// recently used first out, bounded by bytes (`--cache-config local,size=N`).
//
// An entry is charged its key bytes, its outputs' bytes, names and shapes, and a fixed
// overhead (EntryCharge); an insert evicts least-recently-used entries until the new one
// fits, and an entry larger than the whole capacity is refused. A hit moves the entry to
// the front. Keys are found by their hash and compared in full, so a hash collision is a
// miss, never another request's answer.
//
// Thread-safe: one absl::Mutex guards the list, the index and the counters; keys are built
// and outputs copied outside it. Entries are handed out as shared, immutable
// CachedResponses, so an entry evicted while a hit still reads it stays valid.
#ifndef INFERA_MANAGER_RESPONSE_CACHE_H_
#define INFERA_MANAGER_RESPONSE_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/tensor.h"
#include "manager/response_cache_key.h"

namespace infera {

// A cached answer: the outputs, owning their bytes. Immutable once cached.
struct CachedResponse {
  std::vector<Tensor> outputs;
};

class ResponseCache {
 public:
  struct Options {
    uint64_t capacity_bytes = 0;
    CacheKeyHash hash = DefaultCacheKeyHash;  // tests inject collisions
  };
  enum class InsertResult {
    kInserted,
    kAlreadyPresent,  // an equal key is cached (another miss of it finished first)
    kTooLarge,        // the entry alone is larger than the capacity: not cached
  };
  struct Stats {
    uint64_t entries = 0;
    uint64_t bytes = 0;  // charged bytes of the entries held
    uint64_t capacity_bytes = 0;
    uint64_t lookups = 0;
    uint64_t hits = 0;
    uint64_t insertions = 0;
    uint64_t evictions = 0;
    uint64_t refused_too_large = 0;
  };

  // Bytes charged per entry and per tensor besides the data: the list node, the index
  // slot, the tensor headers.
  static constexpr uint64_t kEntryOverheadBytes = 128;
  static constexpr uint64_t kTensorOverheadBytes = 64;

  explicit ResponseCache(Options options);
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // The hash keys for this cache must be built with.
  const CacheKeyHash& hash() const { return options_.hash; }
  uint64_t capacity_bytes() const { return options_.capacity_bytes; }

  // The cached answer of `key`, or null. A hit becomes the most recently used entry.
  std::shared_ptr<const CachedResponse> Lookup(const ResponseCacheKey& key) ABSL_LOCKS_EXCLUDED(mu_);

  // Caches a copy of `outputs` (their bytes copied: a batched output views the whole
  // batch, which the cache must not keep alive) under `key`.
  InsertResult Insert(ResponseCacheKey key, const std::vector<Tensor>& outputs) ABSL_LOCKS_EXCLUDED(mu_);

  Stats GetStats() const ABSL_LOCKS_EXCLUDED(mu_);

  // What an entry of `key_bytes` bytes of key holding `outputs` is charged.
  static uint64_t EntryCharge(size_t key_bytes, const std::vector<Tensor>& outputs);

 private:
  struct Entry {
    std::string key;
    uint64_t hash = 0;
    uint64_t charge = 0;
    std::shared_ptr<const CachedResponse> response;
  };
  using Lru = std::list<Entry>;  // front: most recently used; nodes never move in memory
  // Views an entry's key (in its list node) or a key being looked up.
  struct IndexKey {
    uint64_t hash;
    std::string_view bytes;
  };
  struct IndexHash {
    size_t operator()(const IndexKey& key) const { return static_cast<size_t>(key.hash); }
  };
  struct IndexEqual {
    bool operator()(const IndexKey& a, const IndexKey& b) const { return a.hash == b.hash && a.bytes == b.bytes; }
  };

  // Drops least-recently-used entries until `charge` more bytes fit.
  void EvictFor(uint64_t charge) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<IndexKey, Lru::iterator, IndexHash, IndexEqual> index_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t lookups_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t insertions_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t evictions_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refused_too_large_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace infera

#endif  // INFERA_MANAGER_RESPONSE_CACHE_H_
