#include "common/utf8.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace infera {
namespace {

std::string Encode(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

TEST(Utf8Test, ValidText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii, long enough for the 8-byte fast path"));
  EXPECT_TRUE(IsValidUtf8(std::string("nul\0inside", 10)));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e"));  // é € 𝄞
  EXPECT_TRUE(IsValidUtf8("\xef\xbf\xbf"));                               // U+FFFF
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));                           // U+10FFFF
}

TEST(Utf8Test, EveryScalarValueIsValid) {
  for (uint32_t cp = 0; cp <= 0x10ffff; ++cp) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    ASSERT_TRUE(IsValidUtf8(Encode(cp))) << std::hex << cp;
  }
}

TEST(Utf8Test, InvalidSequences) {
  for (const char* bad : {
           "\x80",              // lone continuation
           "\xbf",              //
           "\xc0\x80",          // overlong NUL
           "\xc1\xbf",          // overlong
           "\xe0\x80\x80",      // overlong
           "\xe0\x9f\xbf",      // overlong
           "\xf0\x80\x80\x80",  // overlong
           "\xf0\x8f\xbf\xbf",  // overlong
           "\xed\xa0\x80",      // surrogate U+D800
           "\xed\xbf\xbf",      // surrogate U+DFFF
           "\xf4\x90\x80\x80",  // U+110000
           "\xf5\x80\x80\x80",  // lead byte > 0xf4
           "\xff",              //
           "\xc3",              // truncated
           "\xe2\x82",          // truncated
           "\xf0\x9d\x84",      // truncated
           "\xc3\x28",          // bad continuation
           "\xe2\x28\xa1",      //
           "\xe2\x82\x28",      //
           "\xf0\x9d\x84\x28",  //
       }) {
    EXPECT_FALSE(IsValidUtf8(bad)) << testing::PrintToString(std::string(bad));
  }
}

TEST(Utf8Test, InvalidByteAtEveryPosition) {
  for (size_t length = 1; length < 40; ++length) {
    for (size_t pos = 0; pos < length; ++pos) {
      std::string s(length, 'a');
      s[pos] = '\xfe';
      ASSERT_FALSE(IsValidUtf8(s)) << length << " " << pos;
    }
  }
  // A multi-byte sequence cut off by the end of the string after an ASCII run.
  EXPECT_FALSE(IsValidUtf8(std::string(16, 'a') + "\xe2\x82"));
  EXPECT_TRUE(IsValidUtf8(std::string(16, 'a') + "\xe2\x82\xac"));
}

TEST(Utf8Test, ReplaceInvalidUtf8) {
  EXPECT_EQ(ReplaceInvalidUtf8("plain \xc3\xa9 \xf0\x9f\x98\x80"), "plain \xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(ReplaceInvalidUtf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(ReplaceInvalidUtf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");  // truncated
  EXPECT_EQ(ReplaceInvalidUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
  EXPECT_EQ(ReplaceInvalidUtf8(std::string("\0x", 2)), std::string("\0x", 2));
  for (const char* bad : {"\xc0\xaf", "x\x80", "\xf5\x80\x80\x80"}) {
    EXPECT_TRUE(IsValidUtf8(ReplaceInvalidUtf8(bad))) << bad;
  }
}

}  // namespace
}  // namespace infera
