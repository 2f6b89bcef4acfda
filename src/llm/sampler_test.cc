#include "llm/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace infera::llm {
namespace {

LlmRequest Req(SamplingParams p, std::vector<int32_t> prompt = {}) {
  LlmRequest r;
  r.sampling = p;
  r.prompt_token_ids = prompt;
  r.all_token_ids = prompt;
  r.rng.seed(p.seed.value_or(1));
  return r;
}

TEST(SamplerTest, GreedyPicksTheFirstMaximumAndReportsRawLogprob) {
  SamplingParams p;
  p.temperature = 0;
  p.logprobs = true;
  LlmRequest r = Req(p);
  std::vector<float> logits = {1.0f, 3.0f, 3.0f, 0.0f};
  SampledToken t = Sampler::Sample(logits.data(), 4, r);
  EXPECT_EQ(t.token_id, 1);
  const double lse = std::log(std::exp(1.0) + 2 * std::exp(3.0) + 1.0);
  EXPECT_NEAR(t.logprob, 3.0 - lse, 1e-5);
}

// Greedy's argmax and the top-1 logprob take a vectorised scan on AVX-512 CPUs: the same
// token as std::max_element (the first of equal maxima) for every length (vector body
// and tail), ties, signed zeros, infinities, and NaNs (where the scan defers to it).
TEST(SamplerTest, GreedyAndTopOneAreTheFirstMaximumAsMaxElement) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-3, 3);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  int cases = 0;
  for (int64_t n : {1, 2, 15, 16, 17, 31, 32, 33, 100, 1000, 128256}) {
    for (int variant = 0; variant < 8; ++variant) {
      std::vector<float> logits(static_cast<size_t>(n));
      for (float& v : logits) v = variant < 2 ? static_cast<float>(small(rng)) : std::normal_distribution<float>(0, 3)(rng);
      const size_t at = static_cast<size_t>(rng() % n), other = static_cast<size_t>(rng() % n);
      if (variant == 2) logits[at] = inf;
      if (variant == 3) std::fill(logits.begin(), logits.end(), -inf);
      if (variant == 4) {  // equal maxima of both signs of zero
        for (float& v : logits) v = -1.0f;
        logits[at] = -0.0f;
        logits[other] = 0.0f;
      }
      if (variant == 5) logits[at] = nan;
      if (variant == 6) logits[0] = nan;
      if (variant == 7) logits[at] = logits[other] = 50.0f;
      const int32_t want = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      SamplingParams p;
      p.temperature = 0;
      std::vector<float> copy = logits;
      EXPECT_EQ(Sampler::GreedyToken(copy.data(), n, Req(p)), want) << n << " " << variant;
      if (variant != 5 && variant != 6) {  // no order among NaNs to compare with
        p.logprobs = true;
        p.top_logprobs = 1;
        LlmRequest r = Req(p);
        copy = logits;
        const SampledToken t = Sampler::Sample(copy.data(), n, r);
        EXPECT_EQ(t.token_id, want) << n << " " << variant;
        ASSERT_EQ(t.top.size(), 1u);
        EXPECT_EQ(t.top[0].token_id, want) << n << " " << variant;
      }
      ++cases;
    }
  }
  EXPECT_EQ(cases, 88);
}

// The log-sum-exp over a real vocabulary (its exps vectorised on AVX-512) against a long
// double reference: vector body and tail, -inf logits, a wide range, and a NaN.
TEST(SamplerTest, LogprobsOverALargeVocabularyMatchTheReference) {
  std::mt19937 rng(11);
  for (int64_t n : {16, 17, 47, 1000, 128256}) {
    std::vector<float> logits(static_cast<size_t>(n));
    for (float& v : logits) v = std::normal_distribution<float>(0, 6)(rng);
    logits[static_cast<size_t>(rng() % n)] = -std::numeric_limits<float>::infinity();
    logits[static_cast<size_t>(rng() % n)] = -200.0f;  // exp underflows in float
    long double sum = 0;
    const float m = *std::max_element(logits.begin(), logits.end());
    for (float v : logits) sum += std::exp(static_cast<long double>(v) - m);
    const double lse = static_cast<double>(m + std::log(sum));
    SamplingParams p;
    p.temperature = 0;
    p.logprobs = true;
    p.top_logprobs = 2;
    LlmRequest r = Req(p);
    std::vector<float> copy = logits;
    const SampledToken t = Sampler::Sample(copy.data(), n, r);
    EXPECT_NEAR(t.logprob, logits[static_cast<size_t>(t.token_id)] - lse, 2e-6) << n;
    ASSERT_EQ(t.top.size(), 2u);
    EXPECT_NEAR(t.top[1].logprob, logits[static_cast<size_t>(t.top[1].token_id)] - lse, 2e-6) << n;
    logits[static_cast<size_t>(n / 2)] = std::numeric_limits<float>::quiet_NaN();
    copy = logits;
    LlmRequest with_nan = Req(p);
    EXPECT_TRUE(std::isnan(Sampler::Sample(copy.data(), n, with_nan).logprob)) << n;
  }
}

TEST(SamplerTest, TopLogprobsAreTheRawDistributionsBestTokens) {
  SamplingParams p;
  p.temperature = 0;
  p.logprobs = true;
  p.top_logprobs = 3;
  p.repetition_penalty = 2.0;  // changes the choice, not the reported distribution
  LlmRequest r = Req(p, {1});
  std::vector<float> logits = {1.0f, 3.0f, 2.0f, 2.0f, -1.0f};
  const double lse = std::log(std::exp(1.0) + std::exp(3.0) + 2 * std::exp(2.0) + std::exp(-1.0));
  SampledToken t = Sampler::Sample(logits.data(), 5, r);
  EXPECT_EQ(t.token_id, 2);  // 3/2 < 2: the penalty moved the argmax
  EXPECT_NEAR(t.logprob, 2.0 - lse, 1e-5);
  ASSERT_EQ(t.top.size(), 3u);
  EXPECT_EQ(t.top[0].token_id, 1);
  EXPECT_NEAR(t.top[0].logprob, 3.0 - lse, 1e-5);
  EXPECT_EQ(t.top[1].token_id, 2);  // ties: lower id first
  EXPECT_EQ(t.top[2].token_id, 3);
  p.top_logprobs = 10;  // more than the vocabulary: all of it
  LlmRequest all = Req(p);
  std::vector<float> small = {0.0f, 1.0f};
  EXPECT_EQ(Sampler::Sample(small.data(), 2, all).top.size(), 2u);
  p.top_logprobs = 0;
  LlmRequest none = Req(p);
  EXPECT_TRUE(Sampler::Sample(small.data(), 2, none).top.empty());
}

TEST(SamplerTest, RepetitionAndPresencePenaltiesChangeTheArgmax) {
  SamplingParams p;
  p.temperature = 0;
  p.repetition_penalty = 2.0;
  LlmRequest r = Req(p, {0});
  std::vector<float> logits = {4.0f, 3.0f};
  EXPECT_EQ(Sampler::Sample(logits.data(), 2, r).token_id, 1);  // 4/2 < 3
  SamplingParams q;
  q.temperature = 0;
  q.presence_penalty = 1.5;
  LlmRequest s = Req(q, {});
  s.all_token_ids = {0};  // an output token
  std::vector<float> l2 = {4.0f, 3.0f};
  EXPECT_EQ(Sampler::Sample(l2.data(), 2, s).token_id, 1);
}

TEST(SamplerTest, TopKAndTopPRestrictTheDraws) {
  SamplingParams p;
  p.temperature = 1.0;
  p.top_k = 2;
  p.seed = 7;
  LlmRequest r = Req(p);
  std::map<int, int> seen;
  for (int i = 0; i < 200; ++i) {
    std::vector<float> logits = {0.0f, 2.0f, 1.9f, 1.0f};
    ++seen[Sampler::Sample(logits.data(), 4, r).token_id];
  }
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[2], 0);
  SamplingParams q;
  q.top_p = 0.5;
  q.seed = 3;
  LlmRequest s = Req(q);
  for (int i = 0; i < 50; ++i) {
    std::vector<float> logits = {5.0f, 0.0f, 0.0f};
    EXPECT_EQ(Sampler::Sample(logits.data(), 3, s).token_id, 0);
  }
}

TEST(SamplerTest, MinPDropsUnlikelyTokens) {
  SamplingParams p;
  p.min_p = 0.5;
  p.seed = 11;
  LlmRequest r = Req(p);
  for (int i = 0; i < 50; ++i) {
    std::vector<float> logits = {2.0f, 2.0f - std::log(3.0f), -5.0f};  // p ratios 1, 1/3, tiny
    EXPECT_EQ(Sampler::Sample(logits.data(), 3, r).token_id, 0);
  }
}

TEST(SamplerTest, SameSeedSameTokens) {
  SamplingParams p;
  p.seed = 42;
  std::vector<int32_t> a, b;
  LlmRequest r1 = Req(p), r2 = Req(p);
  for (int i = 0; i < 20; ++i) {
    std::vector<float> l1(16), l2(16);
    for (int k = 0; k < 16; ++k) l1[k] = l2[k] = static_cast<float>(k % 5);
    a.push_back(Sampler::Sample(l1.data(), 16, r1).token_id);
    b.push_back(Sampler::Sample(l2.data(), 16, r2).token_id);
  }
  EXPECT_EQ(a, b);
}

TEST(SamplerTest, LogitBiasMovesTheChoiceNotTheReportedLogprob) {
  SamplingParams p;
  p.temperature = 0;
  p.logprobs = true;
  p.logit_bias = {{0, 5.0f}, {1, -100.0f}};
  LlmRequest r = Req(p);
  std::vector<float> logits = {1.0f, 3.0f, 2.0f};
  SampledToken t = Sampler::Sample(logits.data(), 3, r);
  EXPECT_EQ(t.token_id, 0);  // 1 + 5 beats 3 - 100 and 2
  const double lse = std::log(std::exp(1.0) + std::exp(3.0) + std::exp(2.0));
  EXPECT_NEAR(t.logprob, 1.0 - lse, 1e-5);  // the raw distribution, as vLLM reports it
}

// Whatever changes the choice -- each bias and penalty, min_tokens, a draw's temperature
// and truncation -- the reported logprobs are the raw distribution's (Sample copies the
// logits only when the choice changes them in place: a missed case fails here).
TEST(SamplerTest, EveryLogitChangeLeavesTheReportedLogprobsRaw) {
  const std::vector<float> raw = {1.0f, 3.0f, 2.5f, 2.0f, -1.0f, 0.5f};
  double sum = 0;
  for (float v : raw) sum += std::exp(static_cast<double>(v));
  const double lse = std::log(sum);
  std::vector<std::pair<const char*, SamplingParams>> cases;
  auto add = [&](const char* name, auto change) {
    SamplingParams p;
    p.temperature = 0;
    p.logprobs = true;
    p.top_logprobs = 2;
    change(p);
    cases.emplace_back(name, p);
  };
  add("greedy", [](SamplingParams&) {});
  add("logit_bias", [](SamplingParams& p) { p.logit_bias = {{1, -50.0f}}; });
  add("repetition", [](SamplingParams& p) { p.repetition_penalty = 3.0; });
  add("frequency", [](SamplingParams& p) { p.frequency_penalty = 2.0; });
  add("presence", [](SamplingParams& p) { p.presence_penalty = 2.0; });
  add("min_tokens", [](SamplingParams& p) { p.min_tokens = 5; });
  add("temperature", [](SamplingParams& p) { p.temperature = 0.5; p.seed = 4; });
  add("top_k", [](SamplingParams& p) { p.temperature = 2.0; p.top_k = 2; p.seed = 4; });
  for (const auto& [name, p] : cases) {
    LlmRequest r = Req(p, {1});
    r.all_token_ids = {1, 1};  // one output token (1): the frequency and presence penalties apply
    r.min_tokens_banned_ids = {1};
    std::vector<float> logits = raw;
    const SampledToken t = Sampler::Sample(logits.data(), static_cast<int64_t>(raw.size()), r);
    EXPECT_NEAR(t.logprob, raw[static_cast<size_t>(t.token_id)] - lse, 1e-5) << name;
    ASSERT_EQ(t.top.size(), 2u) << name;
    EXPECT_EQ(t.top[0].token_id, 1) << name;
    EXPECT_NEAR(t.top[0].logprob, 3.0 - lse, 1e-5) << name;
    EXPECT_EQ(t.top[1].token_id, 2) << name;
    EXPECT_NEAR(t.top[1].logprob, 2.5 - lse, 1e-5) << name;
    if (std::string(name) != "greedy" && std::string(name) != "temperature" && std::string(name) != "top_k") {
      EXPECT_NE(t.token_id, 1) << name << ": the change must move the choice for the check to mean anything";
    }
  }
}

TEST(SamplerTest, MinTokensHoldsBackTheEndingIdsUntilReached) {
  SamplingParams p;
  p.temperature = 0;
  p.min_tokens = 2;
  LlmRequest r = Req(p, {7});
  r.min_tokens_banned_ids = {2, 3};  // EOS and a stop token id
  std::vector<float> logits = {0.0f, 1.0f, 9.0f, 8.0f};
  EXPECT_EQ(Sampler::Sample(std::vector<float>(logits).data(), 4, r).token_id, 1);  // no output yet
  r.all_token_ids.push_back(1);
  EXPECT_EQ(Sampler::Sample(std::vector<float>(logits).data(), 4, r).token_id, 1);  // one output
  r.all_token_ids.push_back(1);
  EXPECT_EQ(Sampler::Sample(std::vector<float>(logits).data(), 4, r).token_id, 2);  // min_tokens reached
  // Sampling (not greedy) never draws a held-back id either.
  p.temperature = 1.0;
  p.seed = 3;
  LlmRequest drawn = Req(p, {7});
  drawn.min_tokens_banned_ids = {2, 3};
  for (int i = 0; i < 200; ++i) {
    const int32_t id = Sampler::Sample(std::vector<float>(logits).data(), 4, drawn).token_id;
    EXPECT_TRUE(id == 0 || id == 1) << id;
  }
}

}  // namespace
}  // namespace infera::llm
