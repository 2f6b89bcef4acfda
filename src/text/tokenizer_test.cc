#include "text/tokenizer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "text/pre_tokenizer.h"
#include "text/test_tokenizers.h"
#include "text/unicode.h"

namespace infera::text {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Tokenizer> SentencePiece() {
  auto t = Tokenizer::FromJson(testing::SentencePieceTokenizerJson(),
                               R"({"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": true})");
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

std::unique_ptr<Tokenizer> ByteLevel() {
  auto t = Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer),
                               R"({"eos_token": "<|endoftext|>"})", R"({"eos_token_id": [260, 261]})");
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

TEST(PreTokenizerTest, Gpt2PatternSplitsWordsContractionsAndWhitespaceRuns) {
  EXPECT_THAT(SplitByPattern("Hello world's  tabs\t\nx 123", SplitPattern::kGpt2),
              ElementsAre("Hello", " world", "'s", " ", " tabs", "\t", "\n", "x", " 123"));
  EXPECT_THAT(SplitByPattern("trailing   ", SplitPattern::kGpt2), ElementsAre("trailing", "   "));
  // Unicode letters and numbers (\p{L}, \p{N}), emoji as "other".
  EXPECT_THAT(SplitByPattern("caf\u00e9 \u65e5\u672c \u00bd! \U0001F600\U0001F600", SplitPattern::kGpt2),
              ElementsAre("caf\u00e9", " \u65e5\u672c", " \u00bd", "!", " \U0001F600\U0001F600"));
}

TEST(PreTokenizerTest, Llama3AndQwen2PatternsGroupDigitsAndNewlines) {
  EXPECT_THAT(SplitByPattern("Hello world's  tabs\t\nx 1234567", SplitPattern::kCl100k),
              ElementsAre("Hello", " world", "'s", " ", " tabs", "\t\n", "x", " ", "123", "456", "7"));
  EXPECT_THAT(SplitByPattern("x 1234", SplitPattern::kQwen2), ElementsAre("x", " ", "1", "2", "3", "4"));
  // Case-insensitive contractions; punctuation keeps trailing newlines; (word.
  EXPECT_THAT(SplitByPattern("I'LL go...\n\n(now)", SplitPattern::kCl100k),
              ElementsAre("I", "'LL", " go", "...\n\n", "(now", ")"));
}

TEST(TokenizerTest, SentencePieceMergesAndByteFallback) {
  auto t = SentencePiece();
  // "▁hello▁world": merges give ▁hello, ▁wor; "l" and "d" stay single.
  EXPECT_THAT(t->Encode("hello world", false), ElementsAre(271, 274, 262, 266));
  // add_special_tokens: the TemplateProcessing "<s> $A".
  EXPECT_THAT(t->Encode("hello", true), ElementsAre(1, 271));
  // é (C3 A9) and 😀 (F0 9F 98 80) are not in the vocabulary: one <0xXX> token per byte.
  EXPECT_THAT(t->Encode("h\u00e9", false), ElementsAre(268, 3 + 0xC3, 3 + 0xA9));
  EXPECT_THAT(t->Encode("\U0001F600", false), ElementsAre(259, 3 + 0xF0, 3 + 0x9F, 3 + 0x98, 3 + 0x80));
  // Special tokens in the text; each segment after one gets its own ▁ (Prepend).
  EXPECT_THAT(t->Encode("<s>hello</s>", false), ElementsAre(1, 271, 2));
  // Whitespace runs become ▁ runs.
  EXPECT_THAT(t->Encode("hello  world", false), ElementsAre(271, 259, 274, 262, 266));
}

TEST(TokenizerTest, SentencePieceDecodesBytesAndStripsTheLeadingSpace) {
  auto t = SentencePiece();
  EXPECT_EQ(t->Decode({1, 271, 274, 262, 266, 2}), "hello world");
  EXPECT_EQ(t->Decode({1, 271, 2}, /*skip_special_tokens=*/false), "<s> hello</s>");
  EXPECT_EQ(t->Decode({268, 3 + 0xC3, 3 + 0xA9}), "h\u00e9");
  EXPECT_EQ(t->Decode({3 + 0xC3}), "\uFFFD");  // half a character
  EXPECT_EQ(t->bos_token_id(), 1);
  EXPECT_THAT(t->eos_token_ids(), ElementsAre(2));
}

TEST(TokenizerTest, ByteLevelEncodesWithMergesAndAddedTokens) {
  auto t = ByteLevel();
  // "the" → t + he; " the" → Ġthe; then the special token.
  EXPECT_THAT(t->Encode("the the<|endoftext|>", true), ElementsAre('t', 259, 258, 260));
  // Bytes of multi-byte characters map to their own ids (byte value == id here).
  EXPECT_THAT(t->Encode("\u00e9\U0001F600", false), ElementsAre(0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80));
  EXPECT_EQ(t->Decode({'t', 259, 258, 260}), "the the");
  EXPECT_EQ(t->Decode({'t', 259, 258, 260}, false), "the the<|endoftext|>");
  EXPECT_THAT(t->eos_token_ids(), ElementsAre(260, 261));
}

TEST(TokenizerTest, UnsupportedPiecesAreLoadErrors) {
  std::string json = testing::ByteLevelTokenizerJson(
      R"({"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated"})");
  auto t = Tokenizer::FromJson(json);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), ::testing::HasSubstr("not one of the supported"));
}

// Found by fuzz/fuzz_tokenizer: a vocab piece shaped like a byte token but without two
// hex digits ended the process (std::stoi threw) or, for "<0x-1>", wrote outside the
// byte table. Such pieces are ordinary tokens.
TEST(TokenizerTest, MalformedByteTokensAreOrdinaryPieces) {
  std::string json = testing::SentencePieceTokenizerJson();
  for (auto [from, to] : {std::pair{"\"<0x41>\"", "\"<0x#D>\""}, std::pair{"\"<0x42>\"", "\"<0x-1>\""}}) {
    const size_t at = json.find(from);
    ASSERT_NE(at, std::string::npos);
    json.replace(at, std::string_view(from).size(), to);
  }
  auto t = Tokenizer::FromJson(json);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->TokenToId("<0x#D>"), 3 + 0x41);
  EXPECT_EQ((*t)->TokenToId("<0x-1>"), 3 + 0x42);
  EXPECT_EQ((*t)->Decode((*t)->Encode("hello", false)), "hello");
}

TEST(UnicodeTest, CategoriesAndUtf8) {
  EXPECT_TRUE(IsLetter(U'\u00e9'));
  EXPECT_TRUE(IsLetter(U'\u65e5'));
  EXPECT_FALSE(IsLetter(U'1'));
  EXPECT_TRUE(IsNumber(U'\u00bd'));
  EXPECT_TRUE(IsWhitespace(U'\u3000'));
  EXPECT_FALSE(IsLetter(U'\U0001F600'));
  size_t tail = 0;
  EXPECT_EQ(CompleteUtf8Prefix("ab\xE6\x97", &tail), 2u);
  EXPECT_EQ(tail, 2u);
  EXPECT_EQ(SanitizeUtf8("a\xFF"), "a\uFFFD");
}

// Issue 13 finding 1: every JSON file the server loads goes through the limited reader,
// so a hostile tokenizer.json / config.json is a load error, not a stack overflow.
TEST(TokenizerTest, DeeplyNestedFilesAreLoadErrorsNamingTheLimit) {
  const std::string deep = R"({"model": )" + std::string(250000, '[') + std::string(250000, ']') + "}";
  auto t = Tokenizer::FromJson(deep);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("tokenizer.json"));
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("100 levels"));
  const std::string ok_tokenizer = testing::SentencePieceTokenizerJson();
  t = Tokenizer::FromJson(ok_tokenizer, deep);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("tokenizer_config.json"));
  t = Tokenizer::FromJson(ok_tokenizer, "", deep);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("generation_config.json"));
}

}  // namespace
}  // namespace infera::text
