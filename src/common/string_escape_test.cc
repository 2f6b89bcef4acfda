// The three escape styles on the characters where they differ, and bytes that are not
// UTF-8 (escaped ASCII stays escaped next to them).
#include "common/string_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace infera {
namespace {

std::string Escaped(std::string_view text, const EscapeStyle& style) {
  std::string out;
  AppendEscaped(out, text, style);
  return out;
}

const std::string kMixed = std::string("q\" b\\ n\n r\r t\t bs\b ff\f x\x01 nul") + std::string(1, '\0') +
                           " del\x7f é€🎉";

TEST(StringEscapeTest, JsonLogLines) {
  EXPECT_EQ(Escaped(kMixed, kJsonEscapes),
            "q\\\" b\\\\ n\\n r\\r t\\t bs\\u0008 ff\\u000c x\\u0001 nul\\u0000 del\x7f é€🎉");
}

TEST(StringEscapeTest, PythonJsonDumps) {
  EXPECT_EQ(Escaped(kMixed, PythonJsonEscapes(false)),
            "q\\\" b\\\\ n\\n r\\r t\\t bs\\b ff\\f x\\u0001 nul\\u0000 del\x7f é€🎉");
  // ensure_ascii: DEL and non-ASCII as \uxxxx, U+1F389 as a surrogate pair (as json.dumps).
  EXPECT_EQ(Escaped(kMixed, PythonJsonEscapes(true)),
            "q\\\" b\\\\ n\\n r\\r t\\t bs\\b ff\\f x\\u0001 nul\\u0000 del\\u007f \\u00e9\\u20ac\\ud83c\\udf89");
}

TEST(StringEscapeTest, GbnfLiterals) {
  EXPECT_EQ(Escaped(kMixed, kGbnfEscapes),
            "q\\\" b\\\\ n\\n r\\r t\\t bs\\x08 ff\\x0C x\\x01 nul\\x00 del\\x7F é€🎉");
}

TEST(StringEscapeTest, BytesThatAreNotUtf8PassThroughAndAsciiAroundThemIsEscaped) {
  // A lead byte followed by a quote: the quote is escaped, not taken as a continuation.
  EXPECT_EQ(Escaped("\xc3\"", PythonJsonEscapes(true)), "\xc3\\\"");
  EXPECT_EQ(Escaped("\xc3\"", PythonJsonEscapes(false)), "\xc3\\\"");
  EXPECT_EQ(Escaped("\x80\xff", PythonJsonEscapes(true)), "\x80\xff");
  EXPECT_EQ(Escaped("\xe2\x82", PythonJsonEscapes(true)), "\xe2\x82");  // truncated at the end
}

TEST(StringEscapeTest, AppendsToWhatIsThere) {
  std::string out = "\"";
  AppendEscaped(out, "a\"b", kJsonEscapes);
  EXPECT_EQ(out, "\"a\\\"b");
  EXPECT_EQ(Escaped("", kGbnfEscapes), "");
}

}  // namespace
}  // namespace infera
