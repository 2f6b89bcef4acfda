// KvCacheManager: which KV-cache blocks each request owns, and the prefix cache.
//
// A request's block table covers its computed (and being-computed) tokens: position p
// lives in block_table[p / block_size] at offset p % block_size. Full blocks are
// identified by a hash chained over all tokens up to and including the block
// (hash(parent, tokens)), so equal prefixes map to the same blocks and are shared
// copy-free between requests (reference counts in the BlockPool). A block becomes a
// cache entry as soon as its tokens are all scheduled (its K/V is written in the same
// step, before any attention reads it). Released blocks keep their entry until the pool
// reuses them (LRU; a request's blocks are released tail first, so shared prefixes stay
// longest).
//
// Counters: prefix-cache queries and hits in tokens (vLLM's definition).
//
// Not thread-safe: owned by the Scheduler on the engine thread.
//
// Usage (scheduler):
//   auto prefix = kv.FindCachedPrefix(request);
//   if (!kv.Allocate(request, prefix.num_tokens, n, &prefix)) { /* no room: wait */ }
//   ... after the step: request.num_computed_tokens = prefix.num_tokens + n;
//   kv.Free(request);   // finished or preempted
#ifndef INFERA_LLM_KV_CACHE_MANAGER_H_
#define INFERA_LLM_KV_CACHE_MANAGER_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "llm/block_pool.h"
#include "llm/llm_request.h"

namespace infera::llm {

class KvCacheManager {
 public:
  KvCacheManager(int32_t num_blocks, int32_t block_size, bool enable_prefix_caching);

  struct CachedPrefix {
    std::vector<int32_t> blocks;
    int64_t num_tokens = 0;
  };

  // The longest run of cached full blocks that starts the request's tokens, never all of
  // them (the last token must be computed to get logits). The query is counted when
  // Allocate() admits the request with it.
  CachedPrefix FindCachedPrefix(const LlmRequest& request);

  // Gives the request slots for tokens [num_computed, num_computed + num_new_tokens +
  // num_lookahead_tokens): first references `prefix` (when the request has no blocks
  // yet), then allocates what is missing. Returns false and changes nothing when too few
  // blocks are free.
  //
  // Lookahead tokens are speculative draft tokens (docs/speculative_decoding.md): they
  // get slots but are not in request.all_token_ids, and their K/V may be rejected, so a
  // block enters the prefix cache only once all its positions are below
  // num_computed + num_new_tokens. IMPORTANT: a rejected draft's slot holds K/V that
  // does not belong to the request's tokens until the real token at that position is
  // computed (over it); only blocks wholly made of verified tokens are ever cached.
  bool Allocate(const LlmRequest& request, int64_t num_computed, int64_t num_new_tokens,
                const CachedPrefix* prefix = nullptr, int64_t num_lookahead_tokens = 0);

  // Releases the request's blocks (tail first). Idempotent.
  void Free(const LlmRequest& request);

  // The request's block table (empty if it has none).
  const std::vector<int32_t>& BlockIds(RequestId id) const;

  int32_t block_size() const { return block_size_; }
  int32_t BlocksFor(int64_t num_tokens) const {
    return static_cast<int32_t>((num_tokens + block_size_ - 1) / block_size_);
  }
  const BlockPool& pool() const { return pool_; }
  void ResetPrefixCache() { pool_.ResetCache(); }
  bool prefix_caching() const { return enable_prefix_caching_; }
  int64_t prefix_cache_queries() const { return queries_; }
  int64_t prefix_cache_hits() const { return hits_; }

 private:
  struct Entry {
    std::vector<int32_t> blocks;
    std::vector<BlockKey> keys;  // of the request's full blocks, computed lazily
    size_t num_cached = 0;       // leading blocks registered in the cache
  };
  const BlockKey& KeyOf(const LlmRequest& request, Entry& entry, size_t block_index);

  const int32_t block_size_;
  const bool enable_prefix_caching_;
  BlockPool pool_;
  std::unordered_map<RequestId, Entry> entries_;
  int64_t queries_ = 0;
  int64_t hits_ = 0;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_KV_CACHE_MANAGER_H_
