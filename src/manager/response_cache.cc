#include "manager/response_cache.h"

#include <utility>

namespace infera {

ResponseCache::ResponseCache(Options options) : options_(std::move(options)) {}

uint64_t ResponseCache::EntryCharge(size_t key_bytes, const std::vector<Tensor>& outputs) {
  uint64_t charge = kEntryOverheadBytes + key_bytes;
  for (const Tensor& output : outputs) {
    charge += kTensorOverheadBytes + output.name.size() + sizeof(int64_t) * output.shape.size() + output.data.size();
  }
  return charge;
}

std::shared_ptr<const CachedResponse> ResponseCache::Lookup(const ResponseCacheKey& key) {
  absl::MutexLock lock(&mu_);
  ++lookups_;
  auto found = index_.find(IndexKey{key.hash(), key.bytes()});
  if (found == index_.end()) return nullptr;
  ++hits_;
  lru_.splice(lru_.begin(), lru_, found->second);  // iterators stay valid
  return found->second->response;
}

ResponseCache::InsertResult ResponseCache::Insert(ResponseCacheKey key, const std::vector<Tensor>& outputs) {
  const uint64_t charge = EntryCharge(key.bytes().size(), outputs);
  if (charge > options_.capacity_bytes) {
    absl::MutexLock lock(&mu_);
    ++refused_too_large_;
    return InsertResult::kTooLarge;
  }
  auto response = std::make_shared<CachedResponse>();
  response->outputs.reserve(outputs.size());
  for (const Tensor& output : outputs) {
    response->outputs.push_back(
        Tensor{output.name, output.dtype, output.shape, Buffer::Copy(output.data.data(), output.data.size())});
  }
  // The key's bytes move into the list node, whose address the index keeps.
  const uint64_t hash = key.hash();
  Entry entry{std::move(key).ReleaseBytes(), hash, charge, std::move(response)};
  absl::MutexLock lock(&mu_);
  if (index_.count(IndexKey{entry.hash, entry.key}) != 0) return InsertResult::kAlreadyPresent;
  EvictFor(charge);
  lru_.push_front(std::move(entry));
  index_.emplace(IndexKey{lru_.front().hash, lru_.front().key}, lru_.begin());
  bytes_ += charge;
  ++insertions_;
  return InsertResult::kInserted;
}

void ResponseCache::EvictFor(uint64_t charge) {
  while (!lru_.empty() && bytes_ + charge > options_.capacity_bytes) {
    const Entry& oldest = lru_.back();
    index_.erase(IndexKey{oldest.hash, oldest.key});
    bytes_ -= oldest.charge;
    lru_.pop_back();
    ++evictions_;
  }
}

ResponseCache::Stats ResponseCache::GetStats() const {
  absl::MutexLock lock(&mu_);
  return Stats{lru_.size(), bytes_, options_.capacity_bytes, lookups_, hits_, insertions_, evictions_,
               refused_too_large_};
}

}  // namespace infera
