// Fuzz target: the grammar engine of structured output (src/grammar/): the GBNF parser
// on arbitrary text, and, when it compiles, the matcher and token masks on arbitrary
// bytes.
//
// Input: "<grammar>\n@@@@\n<bytes>" (without the separator, all of it is the grammar
// and the bytes are empty). The grammar is parsed (errors must be InvalidArgument);
// a compiled grammar gets a matcher over a small fixed vocabulary (every byte, a few
// multi-byte and UTF-8 pieces, an end token), and the bytes are fed one at a time.
// Invariants checked beyond "no crash": at the first steps the token mask equals the
// brute-force answer (each token through a copy of the matcher); a refused byte leaves
// the state as it was (the same mask after); the end token is in the mask exactly when
// CanEnd(); IsTerminated() means no byte is accepted.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/grammar_matcher.h"

namespace {

using infera::grammar::CompiledGrammar;
using infera::grammar::GrammarMatcher;
using infera::grammar::TokenMask;
using infera::grammar::TokenVocabulary;

constexpr int32_t kEnd = 0;

std::shared_ptr<const TokenVocabulary> Vocabulary() {
  std::vector<std::string> bytes = {"</s>"};
  for (int b = 0; b < 256; ++b) bytes.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t : {"{\"", "\": ", "true", "null", "é", "\xC3", "日本", "😀", "\xF0\x9F", "ab", "abc", "aaaa",
                        "\"}", "123", " ", "\n  ", "[1,", "()", "xyz"}) {
    bytes.push_back(t);
  }
  bytes.push_back("");  // a special token
  return std::make_shared<const TokenVocabulary>(std::move(bytes), std::vector<int32_t>{kEnd});
}

TokenMask BruteForce(const GrammarMatcher& m, int32_t vocab) {
  TokenMask mask((vocab + 63) / 64, 0);
  for (int32_t id = 0; id < vocab; ++id) {
    GrammarMatcher copy = m;
    if (copy.AcceptToken(id)) infera::grammar::MaskSet(mask, id);
  }
  return mask;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<const TokenVocabulary> vocab = Vocabulary();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t sep = input.find("\n@@@@\n");
  const std::string_view grammar = input.substr(0, sep);
  const std::string_view bytes = sep == std::string_view::npos ? std::string_view() : input.substr(sep + 6);
  auto compiled = CompiledGrammar::Compile(grammar, vocab);
  if (!compiled.ok()) {
    if (compiled.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  GrammarMatcher m(*compiled);
  for (size_t i = 0; i < bytes.size(); ++i) {
    TokenMask mask;
    if (i < 4) {
      m.ComputeNextTokenMask(mask);
      if (mask != BruteForce(m, vocab->size())) std::abort();
      if (infera::grammar::MaskHas(mask, kEnd) != m.CanEnd()) std::abort();
    }
    const bool terminated = m.IsTerminated();
    const bool accepted = m.AcceptBytes(bytes.substr(i, 1));
    if (terminated && accepted) std::abort();
    if (!accepted && i < 4) {
      TokenMask after;
      m.ComputeNextTokenMask(after);
      if (after != mask) std::abort();
    }
  }
  return 0;
}
