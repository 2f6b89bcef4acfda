#include "llm/ngram_proposer.h"

#include <algorithm>

namespace infera::llm {

NgramProposer::NgramProposer(int32_t min_n, int32_t max_n, int32_t num_tokens)
    : min_n_(std::max(1, min_n)), max_n_(std::max(min_n_, max_n)), num_tokens_(std::max(1, num_tokens)) {}

std::vector<int32_t> NgramProposer::Propose(std::span<const int32_t> tokens) const {
  const int64_t len = static_cast<int64_t>(tokens.size());
  for (int64_t n = std::min<int64_t>(max_n_, len - 1); n >= min_n_; --n) {
    const int64_t suffix = len - n;
    // Most recent earlier occurrence: start positions below the suffix's own.
    for (int64_t start = suffix - 1; start >= 0; --start) {
      if (!std::equal(tokens.begin() + start, tokens.begin() + start + n, tokens.begin() + suffix)) continue;
      // Copy what followed; past the end of `tokens`, copy on through the proposal
      // itself (position p continues as position p - gap did).
      const int64_t gap = suffix - start;
      std::vector<int32_t> proposal;
      proposal.reserve(static_cast<size_t>(num_tokens_));
      for (int64_t p = len; p < len + num_tokens_; ++p) {
        const int64_t from = p - gap;
        proposal.push_back(from < len ? tokens[from] : proposal[from - len]);
      }
      return proposal;
    }
  }
  return {};
}

}  // namespace infera::llm
