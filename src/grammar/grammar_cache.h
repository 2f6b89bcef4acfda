// GrammarCache: compiled grammars by their GBNF text, an LRU bounded by count, shared:
// requests carrying the same grammar (the same schema) get the same CompiledGrammar and
// so share its mask cache. Errors are not cached (a bad grammar costs its parse each
// time, which the size cap on grammars bounds).
//
// Thread-safe (AddRequest runs on the callers' threads). Compiling happens outside the
// lock; two threads compiling the same new text at once both compile, the first stored
// wins.
#ifndef INFERA_GRAMMAR_GRAMMAR_CACHE_H_
#define INFERA_GRAMMAR_GRAMMAR_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grammar/compiled_grammar.h"

namespace infera::grammar {

class GrammarCache {
 public:
  static constexpr size_t kDefaultCapacity = 32;

  explicit GrammarCache(std::shared_ptr<const TokenVocabulary> vocabulary, size_t capacity = kDefaultCapacity)
      : vocabulary_(std::move(vocabulary)), capacity_(std::max<size_t>(capacity, 1)) {}

  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Get(std::string_view gbnf);

  const std::shared_ptr<const TokenVocabulary>& vocabulary() const { return vocabulary_; }
  int64_t compilations() const;
  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const CompiledGrammar>>;
  const std::shared_ptr<const TokenVocabulary> vocabulary_;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mu_);
  int64_t compilations_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace infera::grammar

#endif  // INFERA_GRAMMAR_GRAMMAR_CACHE_H_
