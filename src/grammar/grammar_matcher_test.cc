#include "grammar/grammar_matcher.h"

#include <string>

#include "gtest/gtest.h"
#include "grammar/test_grammars.h"

namespace infera::grammar {
namespace {

std::shared_ptr<const CompiledGrammar> Compile(std::string_view gbnf) {
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g = CompiledGrammar::Compile(gbnf, nullptr);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : nullptr;
}

// The whole text is a sentence of the grammar.
bool Matches(std::string_view gbnf, std::string_view text) {
  GrammarMatcher m(Compile(gbnf));
  return m.AcceptBytes(text) && m.CanEnd();
}

// The text is a prefix of some sentence, byte by byte.
bool Prefix(std::string_view gbnf, std::string_view text) {
  GrammarMatcher m(Compile(gbnf));
  for (char c : text) {
    if (!m.AcceptBytes(std::string_view(&c, 1))) return false;
  }
  return true;
}

TEST(GrammarMatcherTest, Json) {
  EXPECT_TRUE(Matches(kJsonGbnf, R"({"a": 1, "b": [true, null, "x\u00e9\n"], "c": {"d": -1.5e3}})"));
  EXPECT_TRUE(Matches(kJsonGbnf, "{}"));
  EXPECT_TRUE(Matches(kJsonGbnf, "{\"日本\": \"é😀\"}\n  "));
  EXPECT_TRUE(Prefix(kJsonGbnf, R"({"a": [1, 2)"));
  EXPECT_FALSE(Matches(kJsonGbnf, R"({"a": [1, 2)"));
  EXPECT_FALSE(Prefix(kJsonGbnf, R"({"a" 1})"));
  EXPECT_FALSE(Prefix(kJsonGbnf, "{'a': 1}"));
  EXPECT_FALSE(Prefix(kJsonGbnf, "{\"a\": 01}"));
  EXPECT_FALSE(Prefix(kJsonGbnf, "{\"a\": \"\x01\"}"));
  EXPECT_FALSE(Prefix(kJsonGbnf, "[1]"));  // root is an object
}

TEST(GrammarMatcherTest, Repetition) {
  const char* g = R"(root ::= "a"{2,4})";
  EXPECT_FALSE(Matches(g, "a"));
  EXPECT_TRUE(Matches(g, "aa"));
  EXPECT_TRUE(Matches(g, "aaaa"));
  EXPECT_FALSE(Prefix(g, "aaaaa"));
  EXPECT_TRUE(Matches(R"(root ::= "ab"{3})", "ababab"));
  EXPECT_FALSE(Matches(R"(root ::= "ab"{3})", "abab"));
  EXPECT_TRUE(Matches(R"(root ::= "x"{2,} "y")", "xxxxxxxy"));
  EXPECT_FALSE(Matches(R"(root ::= "x"{2,} "y")", "xy"));
  EXPECT_TRUE(Matches(R"(root ::= "x"{,2} "y")", "y"));
  EXPECT_FALSE(Prefix(R"(root ::= "x"{,2} "y")", "xxx"));
  EXPECT_TRUE(Matches(R"(root ::= ("a" | "bc")+ "d"?)", "abcabcad"));
  EXPECT_TRUE(Matches(R"(root ::= [0-9]{5000})", std::string(5000, '7')));
}

TEST(GrammarMatcherTest, TerminationAndEnd) {
  GrammarMatcher m(Compile(R"(root ::= "a" "b"?)"));
  EXPECT_FALSE(m.CanEnd());
  EXPECT_FALSE(m.IsTerminated());
  ASSERT_TRUE(m.AcceptBytes("a"));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.IsTerminated());
  ASSERT_TRUE(m.AcceptBytes("b"));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_TRUE(m.IsTerminated());
  EXPECT_FALSE(m.AcceptBytes("b"));
}

TEST(GrammarMatcherTest, RefusedBytesLeaveTheStateAlone) {
  GrammarMatcher m(Compile(R"(root ::= "abc" | "abd")"));
  ASSERT_TRUE(m.AcceptBytes("a"));
  EXPECT_FALSE(m.AcceptBytes("bx"));
  EXPECT_TRUE(m.AcceptBytes("bd"));
  EXPECT_TRUE(m.CanEnd());
}

TEST(GrammarMatcherTest, CharClassesOverUtf8) {
  const char* g = "root ::= [à-ÿ]+";
  GrammarMatcher m(Compile(g));
  EXPECT_TRUE(m.AcceptBytes("\xC3"));  // the first byte of é
  EXPECT_FALSE(m.CanEnd());
  EXPECT_TRUE(m.AcceptBytes("\xA9"));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.AcceptBytes("\xC3\x9F"));  // ß is below à
  EXPECT_TRUE(Matches(g, "éàÿ"));
  EXPECT_FALSE(Prefix(g, "Ā"));
  // Negated classes and . take every character, of every length, and nothing else.
  EXPECT_TRUE(Matches("root ::= [^a]+", "b日😀é\x7f"));
  EXPECT_FALSE(Prefix("root ::= [^a]+", "ba"));
  EXPECT_TRUE(Matches("root ::= .+", "x日😀é\n"));
  EXPECT_FALSE(Prefix("root ::= .+", "\xFF"));
  EXPECT_FALSE(Prefix("root ::= .+", "\xC0\x80"));      // overlong
  EXPECT_FALSE(Prefix("root ::= .+", "\xED\xA0\x80"));  // a surrogate
  EXPECT_FALSE(Prefix("root ::= .+", "\xF4\x90"));      // past U+10FFFF
  EXPECT_FALSE(Matches("root ::= .", "\xE6\x97"));      // a character cut short
  EXPECT_TRUE(Matches(R"(root ::= "\u00e9\x41\U0001F600")", "éA😀"));
  EXPECT_TRUE(Matches(R"(root ::= [\u4e00-\u9fff]{2})", "日本"));
  EXPECT_FALSE(Prefix(R"(root ::= [\u4e00-\u9fff]{2})", "a"));
}

TEST(GrammarMatcherTest, DeepNestingRunsInBoundedMemory) {
  const char* g = R"g(root ::= x
x ::= "(" x ")" | "")g";
  GrammarMatcher m(Compile(g));
  const std::string open(20000, '('), close(20000, ')');
  for (char c : open) ASSERT_TRUE(m.AcceptBytes(std::string_view(&c, 1)));
  EXPECT_FALSE(m.AcceptBytes(")("));  // the state is kept
  for (char c : close) ASSERT_TRUE(m.AcceptBytes(std::string_view(&c, 1)));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_TRUE(m.IsTerminated());
}

TEST(GrammarMatcherTest, AmbiguityIsBounded) {
  // After n a's there are n+1 distinct stacks (how many b's are owed).
  const char* g = R"(root ::= x
x ::= "a" x "b" | "a" x | "")";
  GrammarMatcher m(Compile(g));
  size_t accepted = 0;
  while (accepted < 5000 && m.AcceptBytes("a")) ++accepted;
  EXPECT_GE(accepted, 100u);
  EXPECT_LT(accepted, 5000u);
  EXPECT_LE(m.num_stacks(), kMaxStacks);
  EXPECT_TRUE(m.AcceptBytes("b"));  // still usable
}

TEST(GrammarMatcherTest, RepetitionOfSomethingEmpty) {
  EXPECT_TRUE(Matches(R"(root ::= ("a"?)* "b")", "aaab"));
  EXPECT_TRUE(Matches(R"(root ::= ("a"? "c"?)*)", ""));
  EXPECT_TRUE(Matches(R"(root ::= ("a"? "c"?)*)", "acaacc"));
  EXPECT_FALSE(Prefix(R"(root ::= ("a"? "c"?)*)", "acx"));
}

TEST(GrammarMatcherTest, RepeatedAlternativesCollapse) {
  GrammarMatcher m(Compile(R"(root ::= ("a" | "a" | "a")*)"));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(m.AcceptBytes("a"));
  EXPECT_LE(m.num_stacks(), 4u);
}

}  // namespace
}  // namespace infera::grammar
