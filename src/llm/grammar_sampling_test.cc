// The sampler under a grammar (sampler.h, docs/structured_output.md): only
// grammar-valid output, EOS where the grammar may end and forced where it must, the
// shortcut's distribution equal to the masked one, logprobs of the raw distribution.
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "llm/grammar_constraint.h"
#include "llm/sampler.h"

namespace infera::llm {
namespace {

constexpr int32_t kEos = 300;
constexpr int64_t kVocab = 304;  // 256 bytes, some pieces, EOS, padding rows

std::shared_ptr<const grammar::TokenVocabulary> Vocabulary() {
  std::vector<std::string> bytes(kVocab);
  for (int b = 0; b < 256; ++b) bytes[b] = std::string(1, static_cast<char>(b));
  const char* pieces[] = {"{\"", "\": ", "\", \"", "\"}", "name", "age", "true", "false", "12", "é", "\xC3", "ab"};
  int32_t id = 256;
  for (const char* p : pieces) bytes[id++] = p;
  return std::make_shared<const grammar::TokenVocabulary>(std::move(bytes), std::vector<int32_t>{kEos});
}

std::shared_ptr<const grammar::CompiledGrammar> Compile(std::string_view gbnf) {
  static const auto vocab = Vocabulary();
  auto g = grammar::CompiledGrammar::Compile(gbnf, vocab);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

constexpr char kObject[] = R"(root ::= "{\"name\": \"" [a-z]{1,6} "\", \"age\": " [0-9]{1,3} ", \"ok\": " ("true" | "false") "}")";

LlmRequest Req(SamplingParams p, std::shared_ptr<const grammar::CompiledGrammar> g) {
  LlmRequest r;
  r.sampling = std::move(p);
  r.prompt_token_ids = {1};
  r.all_token_ids = {1};
  r.rng.seed(r.sampling.seed.value_or(1));
  r.constraint = std::make_shared<GrammarConstraint>(std::move(g), nullptr);
  return r;
}

std::string TextOf(const std::vector<int32_t>& ids) {
  static const auto vocab = Vocabulary();
  std::string s;
  for (int32_t id : ids) s += vocab->bytes(id);
  return s;
}

// Generates until EOS (or `max` tokens) from random logits: what a model that knows
// nothing of the grammar proposes.
std::vector<int32_t> Generate(LlmRequest& r, uint64_t seed, int max = 200) {
  std::mt19937_64 model(seed);
  std::normal_distribution<float> noise(0.0f, 3.0f);
  std::vector<int32_t> out;
  for (int i = 0; i < max; ++i) {
    std::vector<float> logits(kVocab);
    for (float& l : logits) l = noise(model);
    const int32_t t = Sampler::Sample(logits.data(), kVocab, r).token_id;
    r.all_token_ids.push_back(t);
    if (t == kEos) break;
    out.push_back(t);
  }
  return out;
}

bool Valid(std::string_view gbnf, const std::string& text) {
  grammar::GrammarMatcher m(Compile(gbnf));
  return m.AcceptBytes(text) && m.CanEnd();
}

TEST(GrammarSamplingTest, EveryOutputParsesOverManySeeds) {
  struct Mode {
    double temperature;
    int top_k;
    double top_p, min_p;
  };
  for (const Mode& mode : {Mode{0, 0, 1, 0}, Mode{1.0, 0, 1, 0}, Mode{0.7, 20, 1, 0}, Mode{1.3, 0, 0.9, 0},
                           Mode{1.0, 0, 1, 0.05}}) {
    for (uint64_t seed = 0; seed < 60; ++seed) {
      SamplingParams p;
      p.temperature = mode.temperature;
      p.top_k = mode.top_k;
      p.top_p = mode.top_p;
      p.min_p = mode.min_p;
      p.seed = seed;
      LlmRequest r = Req(p, Compile(kObject));
      const std::vector<int32_t> out = Generate(r, seed);
      ASSERT_EQ(r.all_token_ids.back(), kEos) << "seed " << seed;  // forced at the end
      EXPECT_TRUE(Valid(kObject, TextOf(out))) << TextOf(out) << " (temperature " << mode.temperature << ")";
    }
  }
}

TEST(GrammarSamplingTest, GreedyTakesTheBestAllowedToken) {
  SamplingParams p;
  p.temperature = 0;
  LlmRequest r = Req(p, Compile(R"(root ::= "b" | "c")"));
  std::vector<float> logits(kVocab, 0.0f);
  logits['a'] = 9;
  logits['c'] = 5;
  logits['b'] = 4;
  logits[kEos] = 8;
  EXPECT_EQ(Sampler::Sample(logits.data(), kVocab, r).token_id, 'c');
  // Then nothing can follow: EOS is forced whatever the logits say.
  std::vector<float> again(kVocab, 0.0f);
  again['b'] = 20;
  EXPECT_EQ(Sampler::Sample(again.data(), kVocab, r).token_id, kEos);
}

TEST(GrammarSamplingTest, EosOnlyWhereTheGrammarMayEnd) {
  SamplingParams p;
  p.temperature = 0;
  LlmRequest r = Req(p, Compile(R"(root ::= "a"+)"));
  std::vector<float> logits(kVocab, 0.0f);
  logits[kEos] = 10;
  logits['a'] = 1;
  EXPECT_EQ(Sampler::Sample(logits.data(), kVocab, r).token_id, 'a');  // "" is not a sentence
  std::vector<float> next(kVocab, 0.0f);
  next[kEos] = 10;
  next['a'] = 1;
  EXPECT_EQ(Sampler::Sample(next.data(), kVocab, r).token_id, kEos);  // "a" is
}

TEST(GrammarSamplingTest, TheShortcutSamplesTheMaskedDistribution) {
  // p over {x, y, z, w}; the grammar allows y and z: P(y) = p_y / (p_y + p_z).
  std::vector<float> base(kVocab, -30.0f);
  base['x'] = 2.0f;
  base['y'] = 1.0f;
  base['z'] = 0.0f;
  base['w'] = 1.5f;
  const auto g = Compile(R"(root ::= [yz])");
  std::map<int32_t, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    SamplingParams p;
    p.temperature = 1.0;
    p.seed = i;
    LlmRequest r = Req(p, g);
    std::vector<float> logits = base;
    ++counts[Sampler::Sample(logits.data(), kVocab, r).token_id];
  }
  EXPECT_EQ(counts['y'] + counts['z'], n);
  const double expected = std::exp(1.0) / (std::exp(1.0) + std::exp(0.0));
  EXPECT_NEAR(counts['y'] / static_cast<double>(n), expected, 0.015);
}

TEST(GrammarSamplingTest, LogprobsAreTheRawDistributions) {
  SamplingParams p;
  p.temperature = 0;
  p.logprobs = true;
  p.top_logprobs = 1;
  LlmRequest r = Req(p, Compile(R"(root ::= "b")"));
  std::vector<float> logits(kVocab, 0.0f);
  logits['a'] = 5;
  SampledToken t = Sampler::Sample(logits.data(), kVocab, r);
  EXPECT_EQ(t.token_id, 'b');
  const double lse = std::log(std::exp(5.0) + (kVocab - 1));
  EXPECT_NEAR(t.logprob, 0.0 - lse, 1e-4);
  ASSERT_EQ(t.top.size(), 1u);
  EXPECT_EQ(t.top[0].token_id, 'a');
}

TEST(GrammarSamplingTest, TheGrammarWinsOverBiasAndMinTokens) {
  SamplingParams p;
  p.temperature = 1.0;
  p.logit_bias = {{'q', -100.0}};
  p.min_tokens = 5;
  LlmRequest r = Req(p, Compile(R"(root ::= "q")"));
  r.min_tokens_banned_ids = {kEos};
  std::vector<float> logits(kVocab, 0.0f);
  EXPECT_EQ(Sampler::Sample(logits.data(), kVocab, r).token_id, 'q');
  r.all_token_ids.push_back('q');
  std::vector<float> next(kVocab, 0.0f);
  EXPECT_EQ(Sampler::Sample(next.data(), kVocab, r).token_id, kEos);  // min_tokens cannot hold it back
}

TEST(GrammarSamplingTest, MultiByteTokensAndPartialCharacters) {
  // é as one token or as its two bytes; a cut character is never left cut at the end.
  const char* g = R"(root ::= "é"{2} "ab")";
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SamplingParams p;
    p.temperature = 1.0;
    p.seed = seed;
    LlmRequest r = Req(p, Compile(g));
    const std::vector<int32_t> out = Generate(r, seed);
    EXPECT_EQ(TextOf(out), "ééab");
  }
}

TEST(GrammarSamplingTest, AVocabularyThatCannotContinueEndsTheOutput) {
  std::vector<std::string> bytes = {"a", "b", "</s>"};
  auto vocab = std::make_shared<const grammar::TokenVocabulary>(bytes, std::vector<int32_t>{2});
  auto g = grammar::CompiledGrammar::Compile(R"(root ::= "a" "c")", vocab);  // no token writes "c"
  ASSERT_TRUE(g.ok());
  SamplingParams p;
  p.temperature = 0;
  LlmRequest r = Req(p, *g);
  std::vector<float> logits = {0.0f, 5.0f, 1.0f};
  EXPECT_EQ(Sampler::Sample(logits.data(), 3, r).token_id, 0);
  std::vector<float> next = {5.0f, 5.0f, 0.0f};
  EXPECT_EQ(Sampler::Sample(next.data(), 3, r).token_id, 2);
}

}  // namespace
}  // namespace infera::llm
