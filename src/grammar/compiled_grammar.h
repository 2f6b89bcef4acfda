// CompiledGrammar: a parsed grammar (grammar.h) bound to a vocabulary, with the cache of
// the token masks its matchers computed, keyed by the matcher's state (its live parse
// stacks). One per distinct grammar text (grammar_cache.h), shared by every request that
// uses it: 1000 requests with one schema compile once and share their masks.
//
// The mask cache is an LRU bounded by bytes (kMaskCacheBytes: the masks and their keys);
// a state's mask is the same whichever request reaches it, so a hit is exact.
//
// Thread-safe: the grammar is immutable; the mask cache has its own mutex.
#ifndef INFERA_GRAMMAR_COMPILED_GRAMMAR_H_
#define INFERA_GRAMMAR_COMPILED_GRAMMAR_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grammar/grammar.h"
#include "grammar/token_vocabulary.h"

namespace infera::grammar {

// One bit per token id of the vocabulary (bit id % 64 of word id / 64): allowed.
using TokenMask = std::vector<uint64_t>;

inline bool MaskHas(const TokenMask& m, int32_t id) {
  return id >= 0 && static_cast<size_t>(id >> 6) < m.size() && ((m[id >> 6] >> (id & 63)) & 1);
}
inline void MaskSet(TokenMask& m, int32_t id) { m[id >> 6] |= uint64_t{1} << (id & 63); }

inline constexpr size_t kMaskCacheBytes = size_t{8} << 20;

class CompiledGrammar {
 public:
  // Parses `gbnf` (gbnf_parser.h). `vocabulary` may be null: then the matcher works on
  // bytes only (no token masks, no AcceptToken).
  static absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(
      std::string_view gbnf, std::shared_ptr<const TokenVocabulary> vocabulary);

  const Grammar& grammar() const { return grammar_; }
  const TokenVocabulary* vocabulary() const { return vocabulary_.get(); }

  // The cached mask of the matcher state `key`, or null.
  std::shared_ptr<const TokenMask> FindMask(const std::string& key) const;
  void StoreMask(std::string key, std::shared_ptr<const TokenMask> mask) const;
  struct CacheStats {
    int64_t hits = 0, misses = 0, entries = 0, bytes = 0;
  };
  CacheStats cache_stats() const;

 private:
  CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary)
      : grammar_(std::move(grammar)), vocabulary_(std::move(vocabulary)) {}

  using Entry = std::pair<std::string, std::shared_ptr<const TokenMask>>;
  static size_t EntryBytes(const Entry& e) { return e.first.size() + e.second->size() * 8 + 64; }

  const Grammar grammar_;
  const std::shared_ptr<const TokenVocabulary> vocabulary_;
  mutable absl::Mutex mu_;
  mutable std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  mutable std::unordered_map<std::string_view, std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mu_);
  mutable size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace infera::grammar

#endif  // INFERA_GRAMMAR_COMPILED_GRAMMAR_H_
