#include "llm/block_pool.h"

#include "common/check.h"

namespace infera::llm {

BlockPool::BlockPool(int32_t num_blocks) : num_blocks_(num_blocks), blocks_(num_blocks) {
  for (int32_t b = 0; b < num_blocks; ++b) PushBack(b);
}

void BlockPool::PushBack(int32_t b) {
  Block& block = blocks_[b];
  block.prev = tail_;
  block.next = -1;
  block.in_queue = true;
  if (tail_ >= 0) blocks_[tail_].next = b;
  else head_ = b;
  tail_ = b;
  ++num_free_;
}

void BlockPool::Unlink(int32_t b) {
  Block& block = blocks_[b];
  if (block.prev >= 0) blocks_[block.prev].next = block.next;
  else head_ = block.next;
  if (block.next >= 0) blocks_[block.next].prev = block.prev;
  else tail_ = block.prev;
  block.prev = block.next = -1;
  block.in_queue = false;
  --num_free_;
}

void BlockPool::Evict(int32_t b) {
  Block& block = blocks_[b];
  if (!block.key) return;
  auto it = cached_.find(block.key->hash);
  if (it != cached_.end() && it->second == b) cached_.erase(it);
  block.key.reset();
  ++num_evictions_;
}

std::vector<int32_t> BlockPool::Allocate(int32_t n) {
  INFERA_CHECK(n >= 0 && n <= num_free_) << "allocating " << n << " blocks with " << num_free_
                                         << " free";
  std::vector<int32_t> out;
  out.reserve(n);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t b = head_;
    Unlink(b);
    Evict(b);
    blocks_[b].ref_count = 1;
    out.push_back(b);
  }
  return out;
}

void BlockPool::Touch(const std::vector<int32_t>& blocks) {
  for (int32_t b : blocks) {
    if (blocks_[b].in_queue) Unlink(b);
    ++blocks_[b].ref_count;
  }
}

void BlockPool::Release(const std::vector<int32_t>& blocks) {
  for (int32_t b : blocks) {
    INFERA_CHECK(b >= 0 && b < num_blocks_ && blocks_[b].ref_count > 0)
        << "releasing block " << b << " that is not in use (double free)";
    if (--blocks_[b].ref_count == 0) PushBack(b);
  }
}

std::optional<int32_t> BlockPool::Lookup(const BlockKey& key) const {
  auto it = cached_.find(key.hash);
  if (it == cached_.end() || !(*blocks_[it->second].key == key)) return std::nullopt;
  return it->second;
}

void BlockPool::Cache(int32_t block, BlockKey key) {
  if (blocks_[block].key || cached_.count(key.hash)) return;
  cached_.emplace(key.hash, block);
  blocks_[block].key = std::move(key);
}

void BlockPool::ResetCache() {
  cached_.clear();
  for (Block& b : blocks_) b.key.reset();
}

std::vector<int32_t> BlockPool::FreeQueue() const {
  std::vector<int32_t> out;
  for (int32_t b = head_; b >= 0; b = blocks_[b].next) out.push_back(b);
  return out;
}

}  // namespace infera::llm
