#include "llm/draft_verifier.h"

#include <algorithm>
#include <random>

#include "llm/sampler.h"

namespace infera::llm {
namespace {

// Rejection sampling against the draft's distributions (draft_verifier.h). The request's
// tokens get the accepted drafts appended while the next row's p is computed (penalties
// see them, as sequential decoding's would); the caller restores them.
std::vector<SampledToken> VerifyAgainstDraftDistributions(float* logits, int64_t vocab,
                                                          const std::vector<int32_t>& drafts,
                                                          const std::vector<std::vector<float>>& q,
                                                          LlmRequest& request) {
  std::vector<SampledToken> emitted;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<float> raw;
  for (size_t i = 0; i < drafts.size(); ++i) {
    float* row = logits + static_cast<int64_t>(i) * vocab;
    if (request.sampling.logprobs) raw.assign(row, row + vocab);
    const std::vector<float> p = Sampler::Distribution(row, vocab, request);
    const int32_t d = drafts[i];
    const double p_d = p[d], q_d = q[i][d];
    // u < p/q, written without dividing; a q of 0 (never drawn) accepts only what p allows.
    const bool accept = q_d > 0 ? uniform(request.rng) * q_d < p_d : p_d > 0;
    const float* described = request.sampling.logprobs ? raw.data() : row;
    if (accept) {
      emitted.push_back(Sampler::Describe(described, vocab, d, request));
      request.all_token_ids.push_back(d);
      continue;
    }
    std::vector<float> residual(static_cast<size_t>(vocab));
    double total = 0;
    for (int64_t t = 0; t < vocab; ++t) {
      residual[t] = std::max(0.0f, p[t] - q[i][t]);
      total += residual[t];
    }
    const int32_t token = Sampler::DrawFrom(total > 0 ? residual : p, request.rng);
    emitted.push_back(Sampler::Describe(described, vocab, token, request));
    return emitted;
  }
  float* last = logits + static_cast<int64_t>(drafts.size()) * vocab;
  emitted.push_back(Sampler::Sample(last, vocab, request));
  return emitted;
}

}  // namespace

std::vector<SampledToken> VerifyDraftTokens(float* logits, int64_t vocab_size, const std::vector<int32_t>& drafts,
                                            LlmRequest& request, const std::vector<std::vector<float>>* draft_probs) {
  const size_t num_tokens = request.all_token_ids.size();
  if (draft_probs != nullptr && !request.sampling.greedy() && !request.constraint &&
      draft_probs->size() >= drafts.size()) {
    std::vector<SampledToken> emitted =
        VerifyAgainstDraftDistributions(logits, vocab_size, drafts, *draft_probs, request);
    request.all_token_ids.resize(num_tokens);
    return emitted;
  }
  std::vector<SampledToken> emitted;
  emitted.reserve(drafts.size() + 1);
  // The sampler reads the request's tokens (penalties, min_tokens): row i is sampled as
  // sequential decoding would, with drafts 0..i-1 already appended.
  for (size_t i = 0; i <= drafts.size(); ++i) {
    emitted.push_back(Sampler::Sample(logits + static_cast<int64_t>(i) * vocab_size, vocab_size, request));
    if (i == drafts.size() || emitted.back().token_id != drafts[i]) break;
    request.all_token_ids.push_back(drafts[i]);
  }
  request.all_token_ids.resize(num_tokens);
  return emitted;
}

}  // namespace infera::llm
