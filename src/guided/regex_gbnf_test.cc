// RegexToGbnf: the supported subset's GBNF, and every refusal naming the construct.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guided/guided_grammar.h"

namespace infera::guided {
namespace {

using ::testing::HasSubstr;

std::string Ok(const std::string& regex) {
  auto g = RegexToGbnf(regex);
  EXPECT_TRUE(g.ok()) << regex << " → " << g.status();
  return g.ok() ? *g : "";
}

std::string Refused(const std::string& regex) {
  auto g = RegexToGbnf(regex);
  EXPECT_FALSE(g.ok()) << regex << " compiled to " << (g.ok() ? *g : "");
  if (g.ok()) return "";
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(g.status().message());
}

TEST(RegexGbnfTest, WritesTheSubset) {
  EXPECT_EQ(Ok("abc"), "root ::= \"abc\"\n");
  EXPECT_EQ(Ok("^ab+c?$"), "root ::= \"a\" \"b\"+ \"c\"?\n");
  EXPECT_EQ(Ok("(?:ab|c){2,3}"), "root ::= (\"ab\" | \"c\"){2,3}\n");
  EXPECT_EQ(Ok("[a-c_]\\d{4}"), "root ::= [_a-c] [0-9]{4}\n");
  EXPECT_EQ(Ok("\\\"\\\\\\n"), "root ::= \"\\\"\\\\\\n\"\n");
  EXPECT_EQ(Ok("x{2,}y*?"), "root ::= \"x\"{2,} \"y\"*\n");  // lazy: same language
  EXPECT_EQ(Ok("a{,3}"), "root ::= \"a\"{0,3}\n");
  EXPECT_EQ(Ok("a{x}"), "root ::= \"a{x}\"\n");  // not a quantifier: literal, as Python
  EXPECT_EQ(Ok("[-^]"), "root ::= [\\x2D\\x5E]\n");
  EXPECT_EQ(Ok("(?P<year>\\d)"), "root ::= [0-9]\n");
  Ok("[^\\s]+");
  Ok(".\\w\\W\\S\\D[\\u00e9-\\u00ff]é");
}

TEST(RegexGbnfTest, RefusesWhatItDoesNotSupport) {
  EXPECT_THAT(Refused("(a)\\1"), HasSubstr("backreference"));
  EXPECT_THAT(Refused("(?P<n>a)(?P=n)"), HasSubstr("backreference"));
  EXPECT_THAT(Refused("a(?=b)"), HasSubstr("lookahead"));
  EXPECT_THAT(Refused("a(?!b)"), HasSubstr("lookahead"));
  EXPECT_THAT(Refused("(?<=a)b"), HasSubstr("lookbehind"));
  EXPECT_THAT(Refused("(?<!a)b"), HasSubstr("lookbehind"));
  EXPECT_THAT(Refused("\\bword\\b"), HasSubstr("word boundaries"));
  EXPECT_THAT(Refused("(?i)abc"), HasSubstr("inline flags"));
  EXPECT_THAT(Refused("a*+"), HasSubstr("possessive"));
  EXPECT_THAT(Refused("(?>a)"), HasSubstr("atomic"));
  EXPECT_THAT(Refused("a^b"), HasSubstr("^ anywhere"));
  EXPECT_THAT(Refused("a$b"), HasSubstr("$ anywhere"));
  EXPECT_THAT(Refused("^a|b$"), HasSubstr("top-level alternation"));
  EXPECT_THAT(Refused("*a"), HasSubstr("nothing to repeat"));
  EXPECT_THAT(Refused("a**"), HasSubstr("multiple repeat"));
  EXPECT_THAT(Refused("(ab"), HasSubstr("missing ')'"));
  EXPECT_THAT(Refused("ab)"), HasSubstr("unbalanced"));
  EXPECT_THAT(Refused("[ab"), HasSubstr("missing ']'"));
  EXPECT_THAT(Refused("[z-a]"), HasSubstr("out of order"));
  EXPECT_THAT(Refused("\\p{L}"), HasSubstr("Unicode properties"));
  EXPECT_THAT(Refused("\\q"), HasSubstr("unknown escape"));
  EXPECT_THAT(Refused("a\\"), HasSubstr("trailing backslash"));
  EXPECT_THAT(Refused("[[:alpha:]]"), HasSubstr("POSIX"));
  EXPECT_THAT(Refused("\\Aa"), HasSubstr("anchor"));
  EXPECT_THAT(Refused("a{3,2}"), HasSubstr("n < m"));
  EXPECT_THAT(Refused("\xff"), HasSubstr("UTF-8"));
}

TEST(RegexGbnfTest, PathologicalRegexesAreBounded) {
  EXPECT_THAT(Refused("a{1001}"), HasSubstr("limit of 1000"));
  EXPECT_THAT(Refused("(a{1000}){100}b"), HasSubstr("expand"));
  EXPECT_THAT(Refused("((((a{20}){20}){20}){20})"), HasSubstr("expand"));
  EXPECT_THAT(Refused(std::string(100, '(') + "a" + std::string(100, ')')), HasSubstr("nest deeper"));
  EXPECT_THAT(Refused(std::string(20000, 'a')), HasSubstr("bytes"));
  Ok("(a|b|c)*(d+e?)*f{0,1000}");
}

}  // namespace
}  // namespace infera::guided
