// BlockPool: the KV cache's blocks as ids — free list, reference counts and the prefix
// cache's hash → block map (vLLM v1's BlockPool). The memory itself belongs to the model
// runner; the pool only decides which block id holds what.
//
// Free queue: a doubly linked list of every block with reference count 0, in eviction
// order (head = next to hand out). Initially 0, 1, ..., N-1. A released block goes to
// the tail, keeping its hash: it is still a prefix-cache entry until Allocate() takes it
// from the head and evicts it (LRU). A cache hit on a free block (Touch) takes it out of
// the queue wherever it is.
//
//   free queue:  head → [7] ⇄ [2] ⇄ [5] ⇄ [0] ← tail      (7 is evicted first)
//   cached:      hash(a) → 5, hash(a,b) → 0, hash(c) → 3 (3 in use, ref 2)
//
// Not thread-safe: owned by the KvCacheManager on the engine thread.
#ifndef INFERA_LLM_BLOCK_POOL_H_
#define INFERA_LLM_BLOCK_POOL_H_

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace infera::llm {

// Identity of a full block's content: a hash of its parent's hash and its tokens, with
// the parent hash and tokens kept for verification (a 64-bit collision cannot alias).
struct BlockKey {
  uint64_t hash = 0;
  uint64_t parent_hash = 0;
  std::vector<int32_t> tokens;
  bool operator==(const BlockKey& o) const {
    return hash == o.hash && parent_hash == o.parent_hash && tokens == o.tokens;
  }
};

class BlockPool {
 public:
  explicit BlockPool(int32_t num_blocks);

  int32_t num_blocks() const { return num_blocks_; }
  // Blocks that Allocate() can hand out (free, cached or not).
  int32_t num_free_blocks() const { return num_free_; }
  // Fraction of blocks referenced by requests.
  double Usage() const { return 1.0 - static_cast<double>(num_free_) / num_blocks_; }

  // Takes `n` blocks from the head of the free queue, evicting their cache entries.
  // REQUIRES: n <= num_free_blocks() (INFERA_CHECK: aborts otherwise, in every build).
  // Each returned block has reference count 1.
  std::vector<int32_t> Allocate(int32_t n);
  // Adds a reference to each block (a prefix-cache hit); free ones leave the queue.
  void Touch(const std::vector<int32_t>& blocks);
  // Drops one reference from each block in the given order; those reaching 0 are
  // appended to the free queue in that order (so pass a request's blocks tail first).
  // REQUIRES: each block is in use (INFERA_CHECK: a double free aborts).
  void Release(const std::vector<int32_t>& blocks);

  // The cached block holding `key`, if any.
  std::optional<int32_t> Lookup(const BlockKey& key) const;
  // Registers `block` as holding `key` (no-op if `key` is cached already or the block
  // holds another key).
  void Cache(int32_t block, BlockKey key);
  // Drops every cache entry (after a failed step: cached content may be garbage).
  void ResetCache();

  int32_t ref_count(int32_t block) const { return blocks_[block].ref_count; }
  bool is_cached(int32_t block) const { return blocks_[block].key.has_value(); }
  int64_t num_evictions() const { return num_evictions_; }
  // Free queue from head to tail (for tests and debugging).
  std::vector<int32_t> FreeQueue() const;

 private:
  struct Block {
    int32_t ref_count = 0;
    int32_t prev = -1, next = -1;  // free-queue links
    bool in_queue = false;
    std::optional<BlockKey> key;
  };
  void PushBack(int32_t block);
  void Unlink(int32_t block);
  void Evict(int32_t block);

  const int32_t num_blocks_;
  std::vector<Block> blocks_;
  int32_t head_ = -1, tail_ = -1, num_free_ = 0;
  std::unordered_map<uint64_t, int32_t> cached_;  // key hash → block
  int64_t num_evictions_ = 0;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_BLOCK_POOL_H_
