#include "llm/draft_verifier.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;

constexpr int64_t kVocab = 8;

// Rows whose argmax is each of `tops`.
std::vector<float> Rows(std::vector<int32_t> tops) {
  std::vector<float> logits(tops.size() * kVocab, 0.0f);
  for (size_t i = 0; i < tops.size(); ++i) logits[i * kVocab + tops[i]] = 5.0f;
  return logits;
}

std::vector<int32_t> Ids(const std::vector<SampledToken>& tokens) {
  std::vector<int32_t> ids;
  for (const auto& t : tokens) ids.push_back(t.token_id);
  return ids;
}

LlmRequest Greedy() {
  LlmRequest r;
  r.prompt_token_ids = {1, 2};
  r.all_token_ids = r.prompt_token_ids;
  r.sampling.temperature = 0;
  return r;
}

TEST(DraftVerifierTest, GreedyAcceptsTheMatchingPrefixThenTheTargetsToken) {
  LlmRequest r = Greedy();
  std::vector<float> logits = Rows({3, 4, 5, 6});
  EXPECT_THAT(Ids(VerifyDraftTokens(logits.data(), kVocab, {3, 4, 7}, r)), ElementsAre(3, 4, 5));
  EXPECT_THAT(r.all_token_ids, ElementsAre(1, 2));  // left as it was
}

TEST(DraftVerifierTest, AllAcceptedGivesTheBonusToken) {
  LlmRequest r = Greedy();
  std::vector<float> logits = Rows({3, 4, 5, 6});
  EXPECT_THAT(Ids(VerifyDraftTokens(logits.data(), kVocab, {3, 4, 5}, r)), ElementsAre(3, 4, 5, 6));
}

TEST(DraftVerifierTest, FirstDraftRejectedGivesOneToken) {
  LlmRequest r = Greedy();
  std::vector<float> logits = Rows({3, 4, 5});
  EXPECT_THAT(Ids(VerifyDraftTokens(logits.data(), kVocab, {7, 4}, r)), ElementsAre(3));
}

// Row 1 is sampled with draft 0 already an output token, as sequential decoding would:
// the repetition penalty then halves token 3's logit and token 6 wins.
TEST(DraftVerifierTest, AcceptedDraftsCountForPenalties) {
  LlmRequest r = Greedy();
  r.sampling.repetition_penalty = 2.0;
  std::vector<float> logits(2 * kVocab, 0.0f);
  logits[3] = 5.0f;
  logits[kVocab + 3] = 2.0f;
  logits[kVocab + 6] = 1.5f;
  EXPECT_THAT(Ids(VerifyDraftTokens(logits.data(), kVocab, {3, 3}, r)), ElementsAre(3, 6));
}

// Temperature 1: the first emitted token must follow the target's distribution whatever
// the draft (rejection sampling with a point-mass proposal), and the draft is accepted
// with probability p(draft).
TEST(DraftVerifierTest, SamplingPreservesTheTargetDistribution) {
  const std::vector<float> row = {0.0f, 1.0f, 2.0f, 0.5f, -1.0f, 1.5f, 0.0f, -0.5f};
  std::vector<double> p(kVocab);
  double z = 0;
  for (int64_t i = 0; i < kVocab; ++i) z += std::exp(row[i]);
  for (int64_t i = 0; i < kVocab; ++i) p[i] = std::exp(row[i]) / z;
  LlmRequest r = Greedy();
  r.sampling.temperature = 1.0;
  r.rng.seed(7);
  constexpr int kTrials = 40000;
  std::vector<int> counts(kVocab, 0);
  int accepted = 0;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<float> logits = row;
    logits.insert(logits.end(), row.begin(), row.end());
    std::vector<SampledToken> out = VerifyDraftTokens(logits.data(), kVocab, {2}, r);
    ++counts[out[0].token_id];
    accepted += out.size() == 2 ? 1 : 0;
  }
  for (int64_t i = 0; i < kVocab; ++i) {
    EXPECT_NEAR(static_cast<double>(counts[i]) / kTrials, p[i], 0.01) << "token " << i;
  }
  EXPECT_NEAR(static_cast<double>(accepted) / kTrials, p[2], 0.01);
}

TEST(DraftVerifierTest, LogprobsAreEachRowsOwn) {
  LlmRequest r = Greedy();
  r.sampling.logprobs = true;
  std::vector<float> logits = Rows({3, 4});
  std::vector<SampledToken> out = VerifyDraftTokens(logits.data(), kVocab, {3}, r);
  ASSERT_EQ(out.size(), 2u);
  const float expected = 5.0f - std::log(std::exp(5.0f) + 7.0f);
  EXPECT_NEAR(out[0].logprob, expected, 1e-5);
  EXPECT_NEAR(out[1].logprob, expected, 1e-5);
}

}  // namespace
}  // namespace infera::llm
