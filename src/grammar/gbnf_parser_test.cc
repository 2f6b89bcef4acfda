#include "grammar/gbnf_parser.h"

#include <chrono>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::grammar {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(std::string_view text) {
  absl::StatusOr<Grammar> g = ParseGbnf(text);
  if (g.ok()) return "OK";
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(g.status().message());
}

TEST(GbnfParserTest, ParsesTheNotation) {
  const char* kGrammar = R"(# a comment
root ::= "{" ws pair ("," ws pair)* "}"   # trailing comment
pair ::= key ws ":" ws value
key  ::= "\"" [a-zA-Z_] [a-zA-Z0-9_-]* "\""
value ::= [0-9]+ | "true" | "false" | "null"
   | "\u00e9\x41\t\n\\" | [^"\\\x7F] | . | "é"?
ws ::= [ \t\n]{0,4} "x"{2} "y"{1,} "z"{,3}
)";
  absl::StatusOr<Grammar> g = ParseGbnf(kGrammar);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->rule_names[g->root], "root");
  EXPECT_EQ(g->rule_names.size(), g->rules.size());
}

TEST(GbnfParserTest, ErrorsNameLineColumnAndProblem) {
  EXPECT_EQ(ErrorOf("root ::= b\n  b ::= \"x\"\n  c ::= d"), "grammar: line 3, column 9: undefined rule 'd'");
  EXPECT_EQ(ErrorOf("start ::= \"x\""), "grammar: line 1, column 1: the grammar has no 'root' rule (where matching starts)");
  EXPECT_EQ(ErrorOf(""), "grammar: line 1, column 1: the grammar has no 'root' rule (where matching starts)");
  EXPECT_EQ(ErrorOf("root ::= \"a\\q\""), "grammar: line 1, column 12: bad escape '\\q'");
  EXPECT_THAT(ErrorOf("root ::= \"\\x4\""), HasSubstr("needs 2 hex digits"));
  EXPECT_THAT(ErrorOf("root ::= \"\\ud800\""), HasSubstr("surrogate"));
  EXPECT_THAT(ErrorOf("root ::= \"\\U00110000\""), HasSubstr("U+10FFFF"));
  EXPECT_EQ(ErrorOf("root ::= \"abc"), "grammar: line 1, column 10: unterminated string literal");
  EXPECT_THAT(ErrorOf("root ::= [abc"), HasSubstr("unterminated character class"));
  EXPECT_THAT(ErrorOf("root ::= []"), HasSubstr("empty character class"));
  EXPECT_THAT(ErrorOf("root ::= [z-a]"), HasSubstr("out of order"));
  EXPECT_THAT(ErrorOf("root ::= [^\\x00-\\U0010FFFF]"), HasSubstr("matches nothing"));
  EXPECT_THAT(ErrorOf("root ::= \"a\"{10001}"), HasSubstr("repetition bound too large (the limit is 10000)"));
  EXPECT_THAT(ErrorOf("root ::= \"a\"{3,2}"), HasSubstr("n < m"));
  EXPECT_THAT(ErrorOf("root ::= \"a\"{3"), HasSubstr("expected ',' or '}'"));
  EXPECT_THAT(ErrorOf("root ::= \"a\"{x}"), HasSubstr("expected a number"));
  EXPECT_EQ(ErrorOf("root ::= * \"a\""), "grammar: line 1, column 10: '*' has nothing before it to repeat");
  EXPECT_EQ(ErrorOf("root ::= \"a\"\nroot ::= \"b\""), "grammar: line 2, column 1: rule 'root' is defined twice");
  EXPECT_THAT(ErrorOf("root ::= (\"a\""), HasSubstr("expected ')'"));
  EXPECT_THAT(ErrorOf("root ::= \"a\" )"), HasSubstr("expected a rule name, found ')'"));
  EXPECT_THAT(ErrorOf("root \"a\""), HasSubstr("expected '::=' after the rule name 'root'"));
  EXPECT_THAT(ErrorOf("root ::= \"a\" @"), HasSubstr("unexpected character '@'"));
  EXPECT_THAT(ErrorOf("root ::= [\xff]"), HasSubstr("invalid UTF-8"));
}

TEST(GbnfParserTest, RefusesLeftRecursion) {
  EXPECT_THAT(ErrorOf("root ::= root \"a\" | \"b\""), HasSubstr("rule 'root' is left-recursive (root -> root"));
  EXPECT_THAT(ErrorOf("root ::= x\nx ::= y \"a\"\ny ::= x | \"b\""), HasSubstr("is left-recursive"));
  // Through a rule that can match nothing.
  EXPECT_THAT(ErrorOf("root ::= e root \"a\" | \"b\"\ne ::= \"\" | \"c\""), HasSubstr("is left-recursive"));
  // A repetition of something that can be empty is not (the matcher cuts the loop).
  EXPECT_EQ(ErrorOf("root ::= (\"a\"?)*"), "OK");
  EXPECT_EQ(ErrorOf("root ::= x*\nx ::= \"(\" x \")\" | \"\""), "OK");
  EXPECT_THAT(ErrorOf("root ::= x\nx ::= x* \"a\" | \"b\""), HasSubstr("is left-recursive"));
  // Right recursion is fine.
  EXPECT_EQ(ErrorOf("root ::= \"a\" root | \"b\""), "OK");
}

TEST(GbnfParserTest, HostileGrammarsAreBoundedAndFast) {
  const auto start = std::chrono::steady_clock::now();
  // Nested bounded repetitions: each level is a reference, not a copy.
  EXPECT_EQ(ErrorOf("root ::= (((\"ab\"{0,1000}){0,1000}){0,1000})"), "OK");
  EXPECT_THAT(ErrorOf("root ::= ((((((((\"a\"{0,10000}){0,10000}){0,10000}){0,10000}){0,10000}){0,10000}){0,10000})"),
              HasSubstr("more than 65536 rules"));
  std::string long_literal = "root ::= \"" + std::string(100000, 'a') + "\"{0,10}";
  EXPECT_EQ(ErrorOf(long_literal), "OK");
  std::string many = "root ::= \"" + std::string(200000, 'a') + "\" \"" + std::string(900000, 'b') + "\"";
  EXPECT_THAT(ErrorOf(many), HasSubstr("more than 1048576 elements"));
  std::string deep(1000, '(');
  EXPECT_THAT(ErrorOf("root ::= " + deep), HasSubstr("nested deeper than 256"));
  std::string chain = "root ::= r0\n";
  for (int i = 0; i < 20000; ++i) chain += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + "\n";
  chain += "r20000 ::= \"x\"\n";
  EXPECT_EQ(ErrorOf(chain), "OK");  // a long chain: no recursion on the C++ stack
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(GbnfParserTest, CharClassesBecomeUtf8ByteSequences) {
  absl::StatusOr<Grammar> ascii = ParseGbnf("root ::= [a-c]");
  ASSERT_TRUE(ascii.ok());
  ASSERT_EQ(ascii->rules[ascii->root].size(), 1u);
  const Element& e = ascii->elements[ascii->rules[ascii->root][0]];
  ASSERT_EQ(e.type, ElementType::kByteSet);
  EXPECT_TRUE(ascii->byte_sets[e.value].Has('b'));
  EXPECT_FALSE(ascii->byte_sets[e.value].Has('d'));
}

}  // namespace
}  // namespace infera::grammar
