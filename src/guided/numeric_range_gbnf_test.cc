// The digit grammars' text for a few ranges (their exactness over whole ranges is
// checked through the matcher in guided_grammar_match_test.cc).
#include "guided/numeric_range_gbnf.h"

#include "gtest/gtest.h"

namespace infera::guided {
namespace {

TEST(NumericRangeGbnfTest, Integers) {
  EXPECT_EQ(IntegerRangeGbnf(0, 9), "[0-9]");
  EXPECT_EQ(IntegerRangeGbnf(5, 5), "\"5\"");
  EXPECT_EQ(IntegerRangeGbnf(10, 99), "[1-9] [0-9]");
  EXPECT_EQ(IntegerRangeGbnf(0, 150), "([0-9] | [1-9] [0-9] | \"1\" ([0-4] [0-9] | \"5\" \"0\"))");
  EXPECT_EQ(IntegerRangeGbnf(-3, -1), "\"-\" [1-3]");
  EXPECT_EQ(IntegerRangeGbnf(std::nullopt, std::nullopt), "(\"-\" ([1-9] | [1-9] [0-9]+) | ([0-9] | [1-9] [0-9]+))");
  EXPECT_EQ(IntegerRangeGbnf(3, 2), "");
}

TEST(NumericRangeGbnfTest, Numbers) {
  EXPECT_EQ(NumberRangeGbnf(NumberBound{0, false}, NumberBound{1, false}),
            "(\"0\" (\".\" [0-9]+)? | \"1\" (\".\" \"0\"+)?)");
  EXPECT_EQ(NumberRangeGbnf(NumberBound{2, true}, NumberBound{2, false}), "");
}

}  // namespace
}  // namespace infera::guided
