#include "llm/kv_cache_manager.h"

#include <algorithm>

#include "common/check.h"

namespace infera::llm {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

KvCacheManager::KvCacheManager(int32_t num_blocks, int32_t block_size, bool enable_prefix_caching)
    : block_size_(block_size), enable_prefix_caching_(enable_prefix_caching), pool_(num_blocks) {}

const BlockKey& KvCacheManager::KeyOf(const LlmRequest& request, Entry& entry, size_t index) {
  while (entry.keys.size() <= index) {
    const size_t i = entry.keys.size();
    BlockKey key;
    key.parent_hash = i == 0 ? 0 : entry.keys[i - 1].hash;
    key.tokens.assign(request.all_token_ids.begin() + i * block_size_,
                      request.all_token_ids.begin() + (i + 1) * block_size_);
    uint64_t h = Mix(key.parent_hash ^ 0x6A09E667F3BCC908ull);
    for (int32_t t : key.tokens) h = Mix(h ^ static_cast<uint32_t>(t));
    key.hash = h;
    entry.keys.push_back(std::move(key));
  }
  return entry.keys[index];
}

KvCacheManager::CachedPrefix KvCacheManager::FindCachedPrefix(const LlmRequest& request) {
  CachedPrefix prefix;
  if (!enable_prefix_caching_) return prefix;
  Entry& entry = entries_[request.id];
  const int64_t max_hit = request.num_tokens() - 1;
  for (size_t i = 0; static_cast<int64_t>(i + 1) * block_size_ <= max_hit; ++i) {
    auto block = pool_.Lookup(KeyOf(request, entry, i));
    if (!block) break;
    prefix.blocks.push_back(*block);
  }
  prefix.num_tokens = static_cast<int64_t>(prefix.blocks.size()) * block_size_;
  return prefix;
}

bool KvCacheManager::Allocate(const LlmRequest& request, int64_t num_computed,
                              int64_t num_new_tokens, const CachedPrefix* prefix, int64_t num_lookahead_tokens) {
  Entry& entry = entries_[request.id];
  const bool use_prefix = prefix && !prefix->blocks.empty() && entry.blocks.empty();
  const int64_t have = static_cast<int64_t>(entry.blocks.size()) +
                       (use_prefix ? static_cast<int64_t>(prefix->blocks.size()) : 0);
  const int64_t num_slots = num_computed + num_new_tokens + num_lookahead_tokens;
  const int64_t need = std::max<int64_t>(0, BlocksFor(num_slots) - have);
  // Prefix blocks that sit in the free queue stop being allocatable once touched.
  int64_t touched_free = 0;
  if (use_prefix) {
    for (int32_t b : prefix->blocks) touched_free += pool_.ref_count(b) == 0 ? 1 : 0;
  }
  if (need + touched_free > pool_.num_free_blocks()) {
    if (entry.blocks.empty() && entry.keys.empty()) entries_.erase(request.id);
    return false;
  }
  if (prefix && enable_prefix_caching_) {  // a lookup that led to an admission
    queries_ += request.num_tokens();
    hits_ += use_prefix ? prefix->num_tokens : 0;
  }
  if (use_prefix) {
    pool_.Touch(prefix->blocks);
    entry.blocks = prefix->blocks;
    entry.num_cached = prefix->blocks.size();
  }
  for (int32_t b : pool_.Allocate(static_cast<int32_t>(need))) entry.blocks.push_back(b);
  INFERA_CHECK(static_cast<int64_t>(entry.blocks.size()) >= BlocksFor(num_slots))
      << "request " << request.id << " holds " << entry.blocks.size() << " KV blocks for " << num_slots << " tokens";
  if (enable_prefix_caching_) {  // verified tokens only: lookahead slots may be rejected
    const size_t full = static_cast<size_t>((num_computed + num_new_tokens) / block_size_);
    for (size_t i = entry.num_cached; i < full; ++i) pool_.Cache(entry.blocks[i], KeyOf(request, entry, i));
    entry.num_cached = std::max(entry.num_cached, full);
  }
  return true;
}

void KvCacheManager::Free(const LlmRequest& request) {
  auto it = entries_.find(request.id);
  if (it == entries_.end()) return;
  std::vector<int32_t> tail_first(it->second.blocks.rbegin(), it->second.blocks.rend());
  pool_.Release(tail_first);
  entries_.erase(it);
}

const std::vector<int32_t>& KvCacheManager::BlockIds(RequestId id) const {
  static const std::vector<int32_t> kEmpty;
  auto it = entries_.find(id);
  return it == entries_.end() ? kEmpty : it->second.blocks;
}

}  // namespace infera::llm
