// Token masks against brute force: every token tried through a fresh copy of the
// matcher must agree with the mask, at every state of random walks through grammars.
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "grammar/grammar_cache.h"
#include "grammar/grammar_matcher.h"
#include "grammar/test_grammars.h"

namespace infera::grammar {
namespace {

constexpr int32_t kEnd = 1;

// Every single byte, the pieces JSON is made of, UTF-8 characters whole and cut, random
// strings; id 0 is a special token ("": never allowed), id 1 the end token, and the last
// ids stand for padded embedding rows.
std::shared_ptr<const TokenVocabulary> TestVocabulary() {
  std::vector<std::string> bytes = {"", "</s>"};
  for (int b = 0; b < 256; ++b) bytes.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t : {"{\"", "\": ", "\":", "true", "null", "false", "é", "\xC3", "\xA9", "日本", "😀",
                        "\xF0\x9F", "\x98\x80", "\"}", "\"}\n", "123", "1.5", "-0", "e+", " ", "\n ", ", \"",
                        "\\u00", "\\n", "aa", "aaa", "aaaa", "ab", "abc", "(((", ")))", "()", "[1,", "]}"}) {
    bytes.push_back(t);
  }
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\":, a1.-e\\u0\n";
  for (int i = 0; i < 400; ++i) {
    std::string s;
    const int n = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) s.push_back(alphabet[rng() % alphabet.size()]);
    bytes.push_back(s);
  }
  bytes.resize(bytes.size() + 5);  // padding rows
  return std::make_shared<const TokenVocabulary>(std::move(bytes), std::vector<int32_t>{kEnd});
}

TokenMask BruteForce(const GrammarMatcher& m, int32_t vocab) {
  TokenMask mask((vocab + 63) / 64, 0);
  for (int32_t id = 0; id < vocab; ++id) {
    GrammarMatcher copy = m;
    if (copy.AcceptToken(id)) MaskSet(mask, id);
  }
  return mask;
}

void CheckRandomWalks(std::string_view gbnf, int walks, int steps, size_t walk_states = 0, size_t walk_nodes = 0) {
  auto vocab = TestVocabulary();
  GrammarCache cache(vocab);
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g = cache.Get(gbnf);
  ASSERT_TRUE(g.ok()) << g.status();
  std::mt19937 rng(42);
  for (int w = 0; w < walks; ++w) {
    GrammarMatcher m(*g);
    if (walk_states > 0) m.set_walk_limits_for_test(walk_states, walk_nodes);
    for (int s = 0; s < steps; ++s) {
      TokenMask mask, cached;
      m.ComputeNextTokenMask(mask);
      ASSERT_EQ(mask, BruteForce(m, vocab->size())) << "walk " << w << " step " << s;
      m.FillNextTokenMask(cached);
      ASSERT_EQ(cached, mask);
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < vocab->size(); ++id) {
        if (MaskHas(mask, id) && id != kEnd) allowed.push_back(id);
      }
      EXPECT_EQ(MaskHas(mask, kEnd), m.CanEnd());
      EXPECT_FALSE(MaskHas(mask, 0));
      if (allowed.empty()) {
        EXPECT_TRUE(m.IsTerminated());
        break;
      }
      ASSERT_TRUE(m.AcceptToken(allowed[rng() % allowed.size()]));
    }
  }
  EXPECT_GT((*g)->cache_stats().hits, 0);
}

TEST(TokenMaskTest, JsonMatchesBruteForce) { CheckRandomWalks(kJsonGbnf, 20, 40); }

TEST(TokenMaskTest, RepetitionMatchesBruteForce) {
  CheckRandomWalks(R"(root ::= "a"{2,7} ("b" | "c"){0,3} [0-9]+)", 20, 20);
}

TEST(TokenMaskTest, Utf8MatchesBruteForce) {
  CheckRandomWalks(R"(root ::= ([à-ÿ] | [\u4e00-\u9fff] | "😀" | [^a-z{}]){1,12})", 20, 20);
}

TEST(TokenMaskTest, NestingMatchesBruteForce) {
  CheckRandomWalks(R"g(root ::= x
x ::= "(" x ")" | "[" x* "]" | "")g", 20, 30);
}

// Past the memo's bounds the walk goes on without it (transient states): same masks.
TEST(TokenMaskTest, WalkPastTheMemoBoundsMatchesBruteForce) {
  CheckRandomWalks(kJsonGbnf, 10, 30, /*walk_states=*/3, /*walk_nodes=*/1 << 20);
  CheckRandomWalks(kJsonGbnf, 10, 30, /*walk_states=*/1 << 14, /*walk_nodes=*/40);
}

TEST(TokenMaskTest, EndTokenOnlyWhereTheGrammarCanEnd) {
  auto vocab = TestVocabulary();
  auto g = CompiledGrammar::Compile(R"(root ::= "true")", vocab);
  ASSERT_TRUE(g.ok());
  GrammarMatcher m(*g);
  EXPECT_FALSE(m.AcceptToken(kEnd));
  ASSERT_TRUE(m.AcceptBytes("tru"));
  EXPECT_FALSE(m.AcceptToken(kEnd));
  ASSERT_TRUE(m.AcceptBytes("e"));
  EXPECT_TRUE(m.AcceptToken(kEnd));
  EXPECT_TRUE(m.IsTerminated());
  TokenMask mask;
  m.FillNextTokenMask(mask);
  for (int32_t id = 0; id < vocab->size(); ++id) EXPECT_EQ(MaskHas(mask, id), id == kEnd) << id;
}

TEST(GrammarCacheTest, CompilesEachTextOnce) {
  GrammarCache cache(TestVocabulary(), 2);
  std::shared_ptr<const CompiledGrammar> first;
  for (int i = 0; i < 1000; ++i) {
    auto g = cache.Get(kJsonGbnf);
    ASSERT_TRUE(g.ok());
    if (i == 0) first = *g;
    EXPECT_EQ(*g, first);
  }
  EXPECT_EQ(cache.compilations(), 1);
  ASSERT_TRUE(cache.Get(R"(root ::= "a")").ok());
  ASSERT_TRUE(cache.Get(R"(root ::= "b")").ok());  // evicts the JSON grammar
  EXPECT_EQ(cache.size(), 2u);
  ASSERT_TRUE(cache.Get(kJsonGbnf).ok());
  EXPECT_EQ(cache.compilations(), 4);
  EXPECT_FALSE(cache.Get("root ::= x").ok());
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace infera::grammar
