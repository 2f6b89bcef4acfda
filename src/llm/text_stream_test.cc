#include "llm/text_stream.h"

#include "gtest/gtest.h"
#include "llm/test_tokenizers.h"

namespace infera::llm {
namespace {

std::unique_ptr<Tokenizer> ByteLevel() {
  return std::move(*Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer)));
}

std::string PushAll(TextStream& s, std::string_view text, bool* stopped) {
  std::string out;
  for (unsigned char c : text) {
    TextStream::Piece p = s.Push(c);
    out += p.text;
    if (p.stopped) {
      *stopped = true;
      return out;
    }
  }
  return out;
}

TEST(TextStreamTest, StopsBeforeAStopStringSplitAcrossTokens) {
  auto t = ByteLevel();
  SamplingParams p;
  p.stop = {"END"};
  TextStream s(*t, p);
  bool stopped = false;
  // The stream never releases "EN" before knowing whether "D" follows.
  TextStream::Piece a = s.Push('x');
  EXPECT_EQ(a.text, "");  // held: could be the start of nothing yet (hold = 2)
  std::string out = a.text + PushAll(s, "yzENxEND tail", &stopped);
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "xyzENx");
}

TEST(TextStreamTest, IncludesTheStopStringWhenAsked) {
  auto t = ByteLevel();
  SamplingParams p;
  p.stop = {"\n\n"};
  p.include_stop_str_in_output = true;
  TextStream s(*t, p);
  bool stopped = false;
  EXPECT_EQ(PushAll(s, "ab\n\ncd", &stopped), "ab\n\n");
  EXPECT_TRUE(stopped);
}

TEST(TextStreamTest, FinishReleasesHeldText) {
  auto t = ByteLevel();
  SamplingParams p;
  p.stop = {"STOP"};
  TextStream s(*t, p);
  bool stopped = false;
  std::string out = PushAll(s, "abcST", &stopped);
  EXPECT_FALSE(stopped);
  EXPECT_EQ(out + s.Finish(), "abcST");
}

TEST(TextStreamTest, NeverSplitsACharacterWhenHoldingBack) {
  auto t = ByteLevel();
  SamplingParams p;
  p.stop = {"zz"};
  TextStream s(*t, p);
  bool stopped = false;
  std::string out = PushAll(s, "\u00e9\u00e9", &stopped);
  EXPECT_EQ(out, "\u00e9");  // the second é is held back whole
  EXPECT_EQ(s.Finish(), "\u00e9");
}

}  // namespace
}  // namespace infera::llm
