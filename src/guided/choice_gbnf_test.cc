// ChoiceToGbnf and JsonObjectGbnf: the text, the escapes, the bounds.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guided/guided_grammar.h"
#include "guided/guided_limits.h"

namespace infera::guided {
namespace {

using ::testing::HasSubstr;

TEST(ChoiceGbnfTest, OneLiteralPerDistinctChoiceEscaped) {
  auto g = ChoiceToGbnf({"yes", "no", "yes", "a\"b\\c\nd", "é", ""});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(*g, "root ::= \"yes\" | \"no\" | \"a\\\"b\\\\c\\nd\" | \"é\" | \"\"\n");
}

TEST(ChoiceGbnfTest, ControlBytesAreHexEscaped) {
  auto g = ChoiceToGbnf({std::string("a\x01\x7f", 3)});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g, "root ::= \"a\\x01\\x7F\"\n");
}

TEST(ChoiceGbnfTest, Bounds) {
  EXPECT_THAT(ChoiceToGbnf({}).status().message(), HasSubstr("empty"));
  EXPECT_THAT(ChoiceToGbnf(std::vector<std::string>(kMaxChoices + 1, "x")).status().message(),
              HasSubstr("limit"));
  EXPECT_THAT(ChoiceToGbnf({"ok", std::string(kMaxChoiceBytes + 1, 'x')}).status().message(),
              HasSubstr("guided_choice[1]"));
  EXPECT_THAT(ChoiceToGbnf({"\xff"}).status().message(), HasSubstr("UTF-8"));
}

TEST(JsonObjectGbnfTest, AnyObjectWithBoundedWhitespace) {
  std::string g = JsonObjectGbnf();
  EXPECT_THAT(g, ::testing::StartsWith("root ::= object\n"));
  EXPECT_THAT(g, HasSubstr("ws ::= \" \"? | \"\\n\" [ \\t]{0,20}"));
}

}  // namespace
}  // namespace infera::guided
