#include "llm/draft_verifier.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/sampler.h"

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


// Rejection sampling against a draft distribution q (a draft model's drafts): the
// emitted stream — accepted drafts, tokens drawn from norm(max(0, p - q)) after a
// rejection, bonus tokens — is distributed as the target's p whatever q is. The rows do
// not depend on the context, so every emitted token should be an independent draw
// from p: a chi-square statistic against p, with a bound a wrong rule exceeds (the
// same counts against q give thousands), with temperature and top-k in p.
double ChiSquare(const std::vector<int>& counts, const std::vector<double>& expected_p, int total) {
  double chi2 = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double e = expected_p[i] * total;
    if (e == 0) {
      chi2 += counts[i] > 0 ? 1e9 : 0;  // a token p never draws
      continue;
    }
    chi2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi2;
}

struct RejectionRun {
  std::vector<int> counts = std::vector<int>(kVocab, 0);
  int total = 0, drafts = 0, accepted = 0;
};

RejectionRun RunWithDraftDistribution(const std::vector<float>& row, const std::vector<float>& q,
                                      const SamplingParams& sampling, int num_drafts, int num_tokens) {
  LlmRequest r = Greedy();
  r.sampling = sampling;
  r.sampling.max_tokens = 1 << 30;
  r.rng.seed(11);
  std::mt19937_64 draft_rng(5);
  RejectionRun run;
  while (run.total < num_tokens) {
    std::vector<int32_t> drafts;
    std::vector<std::vector<float>> qs;
    for (int i = 0; i < num_drafts; ++i) {
      drafts.push_back(Sampler::DrawFrom(q, draft_rng));
      qs.push_back(q);
    }
    std::vector<float> logits;
    for (int i = 0; i <= num_drafts; ++i) logits.insert(logits.end(), row.begin(), row.end());
    std::vector<SampledToken> out = VerifyDraftTokens(logits.data(), kVocab, drafts, r, &qs);
    EXPECT_GE(out.size(), 1u);
    EXPECT_LE(out.size(), drafts.size() + 1);
    run.drafts += num_drafts;
    for (size_t i = 0; i < out.size(); ++i) {
      if (i < drafts.size() && i + 1 < out.size()) {
        EXPECT_EQ(out[i].token_id, drafts[i]);  // only the last emitted token can differ
        ++run.accepted;
      }
      ++run.counts[out[i].token_id];
      ++run.total;
    }
  }
  return run;
}

std::vector<double> TargetDistribution(const std::vector<float>& row, const SamplingParams& sampling) {
  LlmRequest r = Greedy();
  r.sampling = sampling;
  std::vector<float> scratch = row;
  std::vector<float> p = Sampler::Distribution(scratch.data(), kVocab, r);
  return std::vector<double>(p.begin(), p.end());
}

TEST(DraftVerifierTest, RejectionSamplingWithADraftDistributionPreservesTheTargets) {
  const std::vector<float> row = {0.0f, 1.0f, 2.0f, 0.5f, -1.0f, 1.5f, 0.0f, -0.5f};
  // A poor draft: most of its mass where p has little.
  const std::vector<float> q = {0.30f, 0.02f, 0.05f, 0.03f, 0.40f, 0.05f, 0.10f, 0.05f};
  struct Setting {
    double temperature;
    int32_t top_k;
    int num_drafts;
  };
  for (const Setting& setting : {Setting{1.0, 0, 1}, Setting{1.0, 0, 3}, Setting{0.7, 5, 4}}) {
    SamplingParams sampling;
    sampling.temperature = setting.temperature;
    sampling.top_k = setting.top_k;
    const std::vector<double> p = TargetDistribution(row, sampling);
    constexpr int kTokens = 60000;
    RejectionRun run = RunWithDraftDistribution(row, q, sampling, setting.num_drafts, kTokens);
    // 7 degrees of freedom: P(chi2 > 30) < 1e-4 for a correct sampler (fixed seeds).
    EXPECT_LT(ChiSquare(run.counts, p, run.total), 30.0)
        << "T " << setting.temperature << " top_k " << setting.top_k << " k " << setting.num_drafts;
    // The same counts are far from q (what accepting every draft would give).
    std::vector<double> q64(q.begin(), q.end());
    EXPECT_GT(ChiSquare(run.counts, q64, run.total), 1000.0);
    // Each draft is accepted with probability sum_x min(p(x), q(x)).
    double overlap = 0;
    for (int64_t i = 0; i < kVocab; ++i) overlap += std::min<double>(p[i], q[i]);
    // Acceptance of the drafts that were reached: counted over verified drafts.
    EXPECT_GT(run.accepted, 0);
    EXPECT_LT(static_cast<double>(run.accepted) / run.drafts, overlap + 0.02);
  }
}

TEST(DraftVerifierTest, TheFirstDraftIsAcceptedWithTheOverlapOfPAndQ) {
  const std::vector<float> row = {0.0f, 1.0f, 2.0f, 0.5f, -1.0f, 1.5f, 0.0f, -0.5f};
  const std::vector<float> q = {0.30f, 0.02f, 0.05f, 0.03f, 0.40f, 0.05f, 0.10f, 0.05f};
  SamplingParams sampling;
  sampling.temperature = 1.0;
  const std::vector<double> p = TargetDistribution(row, sampling);
  RejectionRun run = RunWithDraftDistribution(row, q, sampling, /*num_drafts=*/1, 40000);
  double overlap = 0;
  for (int64_t i = 0; i < kVocab; ++i) overlap += std::min<double>(p[i], q[i]);
  EXPECT_NEAR(static_cast<double>(run.accepted) / run.drafts, overlap, 0.015);
}

TEST(DraftVerifierTest, ADraftDistributionEqualToTheTargetsIsAlwaysAccepted) {
  const std::vector<float> row = {0.0f, 1.0f, 2.0f, 0.5f, -1.0f, 1.5f, 0.0f, -0.5f};
  SamplingParams sampling;
  sampling.temperature = 1.0;
  const std::vector<double> p = TargetDistribution(row, sampling);
  RejectionRun run = RunWithDraftDistribution(row, std::vector<float>(p.begin(), p.end()), sampling, 3, 3000);
  // p(d)/q(d) rounds to 1 (float q, float p): essentially every draft accepted.
  EXPECT_GT(static_cast<double>(run.accepted) / run.drafts, 0.999);
}

// Greedy requests ignore q: the argmax rule, exactly as without a draft distribution.
TEST(DraftVerifierTest, GreedyIgnoresTheDraftDistribution) {
  LlmRequest r = Greedy();
  std::vector<float> logits = Rows({3, 4, 5});
  const std::vector<std::vector<float>> q(2, std::vector<float>(kVocab, 1.0f / kVocab));
  EXPECT_THAT(Ids(VerifyDraftTokens(logits.data(), kVocab, {3, 6}, r, &q)), ElementsAre(3, 4));
}

TEST(DraftVerifierTest, LogprobsWithADraftDistributionAreTheRawRows) {
  LlmRequest r = Greedy();
  r.sampling.temperature = 1.0;
  r.sampling.logprobs = true;
  r.sampling.repetition_penalty = 1.5;  // changes p, not the reported logprobs
  r.rng.seed(3);
  std::vector<float> logits = Rows({3, 3, 3});
  const float expected = 5.0f - std::log(std::exp(5.0f) + 7.0f);
  std::vector<float> q(kVocab, 0.0f);
  q[3] = 1.0f;
  const std::vector<std::vector<float>> qs(2, q);
  std::vector<SampledToken> out = VerifyDraftTokens(logits.data(), kVocab, {3, 3}, r, &qs);
  ASSERT_GE(out.size(), 1u);
  if (out[0].token_id == 3) EXPECT_NEAR(out[0].logprob, expected, 1e-5);
  else EXPECT_NEAR(out[0].logprob, -std::log(std::exp(5.0f) + 7.0f), 1e-5);
}

}  // namespace
}  // namespace infera::llm
