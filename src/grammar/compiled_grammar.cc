#include "grammar/compiled_grammar.h"

#include "grammar/gbnf_parser.h"

namespace infera::grammar {

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompiledGrammar::Compile(
    std::string_view gbnf, std::shared_ptr<const TokenVocabulary> vocabulary) {
  absl::StatusOr<Grammar> g = ParseGbnf(gbnf);
  if (!g.ok()) return g.status();
  return std::shared_ptr<const CompiledGrammar>(new CompiledGrammar(*std::move(g), std::move(vocabulary)));
}

std::shared_ptr<const TokenMask> CompiledGrammar::FindMask(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void CompiledGrammar::StoreMask(std::string key, std::shared_ptr<const TokenMask> mask) const {
  absl::MutexLock lock(&mu_);
  if (index_.contains(key)) return;
  Entry entry{std::move(key), std::move(mask)};
  const size_t size = EntryBytes(entry);
  if (size > kMaskCacheBytes) return;
  while (bytes_ + size > kMaskCacheBytes && !lru_.empty()) {
    bytes_ -= EntryBytes(lru_.back());
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.push_front(std::move(entry));
  index_.emplace(lru_.front().first, lru_.begin());
  bytes_ += size;
}

CompiledGrammar::CacheStats CompiledGrammar::cache_stats() const {
  absl::MutexLock lock(&mu_);
  return {hits_, misses_, static_cast<int64_t>(lru_.size()), static_cast<int64_t>(bytes_)};
}

}  // namespace infera::grammar
