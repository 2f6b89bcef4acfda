#include "llm/draft_verifier.h"

#include "llm/sampler.h"

namespace infera::llm {

std::vector<SampledToken> VerifyDraftTokens(float* logits, int64_t vocab_size, const std::vector<int32_t>& drafts,
                                            LlmRequest& request) {
  std::vector<SampledToken> emitted;
  emitted.reserve(drafts.size() + 1);
  // The sampler reads the request's tokens (penalties, min_tokens): row i is sampled as
  // sequential decoding would, with drafts 0..i-1 already appended.
  const size_t num_tokens = request.all_token_ids.size();
  for (size_t i = 0; i <= drafts.size(); ++i) {
    emitted.push_back(Sampler::Sample(logits + static_cast<int64_t>(i) * vocab_size, vocab_size, request));
    if (i == drafts.size() || emitted.back().token_id != drafts[i]) break;
    request.all_token_ids.push_back(drafts[i]);
  }
  request.all_token_ids.resize(num_tokens);
  return emitted;
}

}  // namespace infera::llm
