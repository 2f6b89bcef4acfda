// Structured output in the LLM engine (docs/structured_output.md): a request's grammar
// constraint (GrammarConstraint, held by its LlmRequest) and the engine's compiler of
// them (GrammarCompiler, one per engine).
//
// GrammarCompiler builds the grammar vocabulary from the tokenizer on first use (each
// id's bytes, tokenizer.h TokenBytes; added and special tokens and ids past the
// tokenizer's vocabulary — padded embedding rows — write nothing a grammar can allow;
// the end tokens are the engine's EOS ids) and keeps the compiled grammars in a bounded
// LRU keyed by the GBNF text (grammar/grammar_cache.h), so requests with the same
// schema compile once and share their mask cache. A bad grammar is InvalidArgument,
// which the frontends return as a 400.
//
// GrammarConstraint: the request's matcher, advanced with every token the sampler
// keeps (sampler.h says how it samples under the constraint). It survives preemption
// with the request: its output tokens are kept, only the KV cache is recomputed.
// The time the sampler spends in it (acceptance checks and masks) is recorded per
// token (LlmMetrics::RecordGrammarTime).
//
// Thread-safety: GrammarCompiler is thread-safe (AddRequest runs on the callers'
// threads); a GrammarConstraint is the engine thread's, like its request.
#ifndef INFERA_LLM_GRAMMAR_CONSTRAINT_H_
#define INFERA_LLM_GRAMMAR_CONSTRAINT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grammar/grammar_cache.h"
#include "grammar/grammar_matcher.h"
#include "llm/text_imports.h"

namespace infera::llm {

class LlmMetrics;

class GrammarConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const grammar::CompiledGrammar> grammar, LlmMetrics* metrics);

  // Nothing more can follow: the sampler forces the end token.
  bool IsTerminated() const { return matcher_.IsTerminated(); }
  // The end token to force (the first EOS id), if the model has one.
  std::optional<int32_t> end_token() const;
  // Advances over `token` if the grammar allows it now (an end token: allowed, without
  // advancing, where the grammar may end).
  bool TryAccept(int32_t token);
  // The tokens allowed now (cached per grammar state).
  const grammar::TokenMask& Mask();
  // One sampled token's time in the constraint, to the metrics.
  void EndToken();

  const grammar::GrammarMatcher& matcher() const { return matcher_; }

 private:
  grammar::GrammarMatcher matcher_;
  grammar::TokenMask mask_;
  LlmMetrics* const metrics_;
  std::chrono::steady_clock::duration spent_{};
};

class GrammarCompiler {
 public:
  // `vocab_size`: the model's (logits) vocabulary, which may exceed the tokenizer's.
  GrammarCompiler(const Tokenizer* tokenizer, int64_t vocab_size, std::vector<int32_t> end_token_ids,
                  size_t cache_capacity = grammar::GrammarCache::kDefaultCapacity);

  // The constraint of a request with this GBNF grammar (not empty).
  absl::StatusOr<std::shared_ptr<GrammarConstraint>> Compile(std::string_view gbnf, LlmMetrics* metrics);
  int64_t compilations() const;

 private:
  grammar::GrammarCache& Cache();

  const Tokenizer* const tokenizer_;
  const int64_t vocab_size_;
  const std::vector<int32_t> end_token_ids_;
  const size_t cache_capacity_;
  mutable absl::Mutex mu_;
  std::unique_ptr<grammar::GrammarCache> cache_ ABSL_GUARDED_BY(mu_);  // built on first use
};

// The vocabulary a grammar sees of `tokenizer` for a model of `vocab_size` logits.
std::shared_ptr<const grammar::TokenVocabulary> GrammarVocabulary(const Tokenizer& tokenizer, int64_t vocab_size,
                                                                  std::vector<int32_t> end_token_ids);

}  // namespace infera::llm

#endif  // INFERA_LLM_GRAMMAR_CONSTRAINT_H_
