#include "grammar/grammar_cache.h"

namespace infera::grammar {

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> GrammarCache::Get(std::string_view gbnf) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = index_.find(gbnf); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> compiled = CompiledGrammar::Compile(gbnf, vocabulary_);
  if (!compiled.ok()) return compiled.status();
  absl::MutexLock lock(&mu_);
  ++compilations_;
  if (auto it = index_.find(gbnf); it != index_.end()) return it->second->second;
  lru_.emplace_front(std::string(gbnf), *compiled);
  index_.emplace(lru_.front().first, lru_.begin());
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return *compiled;
}

int64_t GrammarCache::compilations() const {
  absl::MutexLock lock(&mu_);
  return compilations_;
}

size_t GrammarCache::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

}  // namespace infera::grammar
