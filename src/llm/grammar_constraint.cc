#include "llm/grammar_constraint.h"

#include <string>
#include <utility>

#include "llm/llm_metrics.h"

namespace infera::llm {

using Clock = std::chrono::steady_clock;

std::shared_ptr<const grammar::TokenVocabulary> GrammarVocabulary(const Tokenizer& tokenizer, int64_t vocab_size,
                                                                  std::vector<int32_t> end_token_ids) {
  std::vector<std::string> bytes(static_cast<size_t>(std::max<int64_t>(vocab_size, 0)));
  const int32_t known = std::min<int32_t>(tokenizer.vocab_size(), static_cast<int32_t>(bytes.size()));
  for (int32_t id = 0; id < known; ++id) bytes[id] = std::string(tokenizer.TokenBytes(id));
  for (const AddedToken& a : tokenizer.added_tokens()) {
    if (a.id >= 0 && a.id < static_cast<int32_t>(bytes.size())) bytes[a.id].clear();
  }
  for (int32_t id = 0; id < known; ++id) {
    if (tokenizer.IsSpecial(id)) bytes[id].clear();
  }
  return std::make_shared<const grammar::TokenVocabulary>(std::move(bytes), std::move(end_token_ids));
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const grammar::CompiledGrammar> grammar, LlmMetrics* metrics)
    : matcher_(std::move(grammar)), metrics_(metrics) {}

std::optional<int32_t> GrammarConstraint::end_token() const {
  const auto& ends = matcher_.compiled().vocabulary()->end_token_ids();
  if (ends.empty()) return std::nullopt;
  return ends.front();
}

bool GrammarConstraint::TryAccept(int32_t token) {
  const Clock::time_point start = Clock::now();
  const bool ok = matcher_.AcceptToken(token);
  spent_ += Clock::now() - start;
  return ok;
}

const grammar::TokenMask& GrammarConstraint::Mask() {
  const Clock::time_point start = Clock::now();
  matcher_.FillNextTokenMask(mask_);
  spent_ += Clock::now() - start;
  return mask_;
}

void GrammarConstraint::EndToken() {
  if (metrics_) metrics_->RecordGrammarTime(std::chrono::duration<double>(spent_).count());
  spent_ = {};
}

GrammarCompiler::GrammarCompiler(const Tokenizer* tokenizer, int64_t vocab_size, std::vector<int32_t> end_token_ids,
                                 size_t cache_capacity)
    : tokenizer_(tokenizer),
      vocab_size_(vocab_size),
      end_token_ids_(std::move(end_token_ids)),
      cache_capacity_(cache_capacity) {}

grammar::GrammarCache& GrammarCompiler::Cache() {
  absl::MutexLock lock(&mu_);
  if (!cache_) {
    cache_ = std::make_unique<grammar::GrammarCache>(GrammarVocabulary(*tokenizer_, vocab_size_, end_token_ids_),
                                                     cache_capacity_);
  }
  return *cache_;
}

absl::StatusOr<std::shared_ptr<GrammarConstraint>> GrammarCompiler::Compile(std::string_view gbnf,
                                                                           LlmMetrics* metrics) {
  absl::StatusOr<std::shared_ptr<const grammar::CompiledGrammar>> compiled = Cache().Get(gbnf);
  if (!compiled.ok()) return compiled.status();
  return std::make_shared<GrammarConstraint>(*std::move(compiled), metrics);
}

int64_t GrammarCompiler::compilations() const {
  absl::MutexLock lock(&mu_);
  return cache_ ? cache_->compilations() : 0;
}

}  // namespace infera::llm
