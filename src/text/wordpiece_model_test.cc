#include "text/wordpiece_model.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "text/normalizer.h"
#include "text/pre_tokenizer.h"
#include "text/test_tokenizers.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

namespace infera::text {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

WordPieceModel Model(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  auto wp = WordPieceModel::FromJson(doc);
  EXPECT_TRUE(wp.ok()) << wp.status();
  return std::move(*wp);
}

std::vector<int32_t> Encode(const WordPieceModel& wp, std::string_view word) {
  std::vector<int32_t> ids;
  wp.Encode(word, ids);
  return ids;
}

constexpr std::string_view kModel = R"({"type": "WordPiece", "unk_token": "[UNK]",
    "continuing_subword_prefix": "##", "max_input_chars_per_word": 6,
    "vocab": {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "unaff": 4, "a": 5, "##b": 6, "é": 7, "##é": 8}})";

TEST(WordPieceModelTest, GreedyLongestMatchFirst) {
  WordPieceModel wp = Model(kModel);
  // "unaff" is longer than "un": greedy takes it, then ##able.
  EXPECT_THAT(Encode(wp, "unaffable"), ElementsAre(0));  // 9 chars > 6: unknown
  EXPECT_THAT(Encode(wp, "unaff"), ElementsAre(4));
  EXPECT_THAT(Encode(wp, "abbb"), ElementsAre(5, 6, 6, 6));
  // Multi-byte characters count once and are never split.
  EXPECT_THAT(Encode(wp, "éééééé"), ElementsAre(7, 8, 8, 8, 8, 8));
  EXPECT_THAT(Encode(wp, "ééééééé"), ElementsAre(0));
  EXPECT_THAT(Encode(wp, ""), IsEmpty());
}

TEST(WordPieceModelTest, AWordWithAnUnmatchablePartIsOneUnknown) {
  WordPieceModel wp = Model(kModel);
  EXPECT_THAT(Encode(wp, "abx"), ElementsAre(0));
  EXPECT_THAT(Encode(wp, "b"), ElementsAre(0));  // "b" only exists as ##b
  std::vector<int32_t> ids{42};
  wp.Encode("zz", ids);
  EXPECT_THAT(ids, ElementsAre(42, 0));  // earlier ids are kept
}

TEST(WordPieceModelTest, AHugeWordIsLinearWorkWhateverTheCharacterLimit) {
  // A tokenizer.json may lift max_input_chars_per_word; a client's one-word MB then used
  // to cost O(length²) (each position walked back from the word's end): minutes for
  // this one. Now each position looks at most the longest entry ahead.
  WordPieceModel wp = Model(R"({"type": "WordPiece", "unk_token": "[UNK]", "max_input_chars_per_word": 100000000,
      "vocab": {"[UNK]": 0, "a": 1, "##a": 2, "##aa": 3}})");
  const std::string word(size_t{1} << 20, 'a');
  const std::vector<int32_t> ids = Encode(wp, word);
  ASSERT_EQ(ids.size(), 1 + ((1 << 20) - 1) / 2 + 1);  // a, then ##aa pairs, then one ##a
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids[1], 3);
  EXPECT_EQ(ids.back(), 2);
  // Past the limit (6 here): one [UNK] after counting 7 characters, however long.
  EXPECT_THAT(Encode(Model(kModel), word), ElementsAre(0));
}

TEST(WordPieceModelTest, LoadErrorsNameTheProblem) {
  rapidjson::Document doc;
  auto load = [&](std::string_view json) {
    doc.Parse(json.data(), json.size());
    return WordPieceModel::FromJson(doc).status();
  };
  EXPECT_THAT(std::string(load(R"({"vocab": {"a": 0}})").message()), HasSubstr("unk_token '[UNK]'"));
  EXPECT_THAT(std::string(load(R"({"vocab": {"[UNK]": 0, "a": 7}})").message()), HasSubstr("'a' needs an id"));
  EXPECT_THAT(std::string(load(R"({"vocab": {"[UNK]": -1}})").message()), HasSubstr("needs an id"));
  EXPECT_THAT(std::string(load(R"({"vocab": [1]})").message()), HasSubstr("no vocab object"));
  EXPECT_THAT(std::string(load(R"({"vocab": {"[UNK]": 0}, "max_input_chars_per_word": 0})").message()),
              HasSubstr("max_input_chars_per_word"));
  EXPECT_TRUE(load(R"({"vocab": {"[UNK]": 0}, "continuing_subword_prefix": ""})").ok());
}

TEST(UnicodeTest, BertCategoriesDecompositionsAndLowercase) {
  EXPECT_TRUE(IsOtherCategory(0x200B) || IsOtherCategory(0x200D));  // format characters
  EXPECT_TRUE(IsOtherCategory(0x7F));
  EXPECT_FALSE(IsOtherCategory('a'));
  EXPECT_TRUE(IsPunctuation(0x3002));  // 。
  EXPECT_FALSE(IsPunctuation('$'));    // Sc, BERT adds ASCII symbols itself
  EXPECT_TRUE(IsNonspacingMark(0x301));
  EXPECT_TRUE(IsCjkIdeograph(0x4E2D));
  EXPECT_FALSE(IsCjkIdeograph(0x3042));  // hiragana
  std::u32string out;
  AppendCanonicalDecomposition(0xE9, out);  // é
  EXPECT_EQ(out, std::u32string({'e', 0x301}));
  out.clear();
  AppendCanonicalDecomposition(0xD55C, out);  // 한
  EXPECT_EQ(out, std::u32string({0x1112, 0x1161, 0x11AB}));
  out.clear();
  AppendLowercase(0xC9, out);   // É
  AppendLowercase(0x130, out);  // İ → i + combining dot
  AppendLowercase(0x3A3, out);  // Σ → σ (no final-sigma context)
  EXPECT_EQ(out, std::u32string({0xE9, 'i', 0x307, 0x3C3}));
}

TEST(BertNormalizerTest, CleansSpacesCjkStripsAccentsAndLowercases) {
  rapidjson::Document doc;
  doc.Parse(R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                "strip_accents": null, "lowercase": true})");
  auto n = Normalizer::FromJson(&doc);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->Normalize("Caf\xC3\xA9\tCR\xC3\x88ME\x01\xEF\xBF\xBD!"), "cafe creme!");
  EXPECT_EQ(n->Normalize("\xE4\xB8\xAD\xE6\x96\x87x"), " \xE4\xB8\xAD  \xE6\x96\x87 x");
  // The ASCII fast path agrees with the general one: controls dropped, \t \n \r spaced.
  EXPECT_EQ(n->Normalize("A\tB\nC\rD\x0b\x7f\x01" "E"), "a b c de");
  EXPECT_EQ(n->Normalize("A\tB\nC\rD\x0b\x7f\x01" "E\xC3\xA9"), "a b c dee");
  doc.Parse(R"({"type": "BertNormalizer", "lowercase": false})");
  n = Normalizer::FromJson(&doc);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->Normalize("Caf\xC3\xA9"), "Caf\xC3\xA9");  // strip_accents follows lowercase
}

TEST(BertPreTokenizerTest, SplitsWhitespaceAndIsolatesPunctuation) {
  rapidjson::Document doc;
  doc.Parse(R"({"type": "BertPreTokenizer"})");
  auto pt = PreTokenizer::FromJson(&doc);
  ASSERT_TRUE(pt.ok());
  EXPECT_THAT(pt->Split("  hello,world!! a$b \xE3\x80\x82x ", true),
              ElementsAre("hello", ",", "world", "!", "!", "a", "$", "b", "\xE3\x80\x82", "x"));
  EXPECT_THAT(pt->Split(" \t\n ", true), IsEmpty());
}

std::unique_ptr<Tokenizer> Bert() {
  auto t = Tokenizer::FromJson(testing::BertTokenizerJson());
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

TEST(WordPieceTokenizerTest, EncodesLikeBertUncased) {
  auto t = Bert();
  EXPECT_TRUE(t->is_wordpiece());
  EXPECT_THAT(t->Encode("The unaffable CAFÉ, running!", true), ElementsAre(2, 5, 1, 9, 10, 19, 20, 11, 3));
  EXPECT_THAT(t->Encode("unaffs", false), ElementsAre(6, 7, 14));
  EXPECT_THAT(t->Encode("中文a", false), ElementsAre(12, 13, 15));
  EXPECT_THAT(t->Encode("aaaaaaaaa", false), ElementsAre(1));  // 9 chars > 8
  EXPECT_THAT(t->Encode("aaaaaaaa", false), ElementsAre(15, 16, 16, 16, 16, 16, 16, 16));
  EXPECT_THAT(t->Encode("", true), ElementsAre(2, 3));
  EXPECT_THAT(t->Encode(" \t ", true), ElementsAre(2, 3));
  EXPECT_THAT(t->Encode("[CLS] hello", false), ElementsAre(2, 17));  // special tokens match raw text
  EXPECT_EQ(t->num_special_tokens(true), 2u);
  EXPECT_EQ(t->num_special_tokens(false), 0u);
  EXPECT_EQ(t->pad_token_id(), 0);
}

TEST(WordPieceTokenizerTest, TruncationKeepsTheSpecialTokens) {
  auto t = Bert();
  Encoding e = t->EncodeTruncated("hello world hello world", true, 4);
  EXPECT_THAT(e.ids, ElementsAre(2, 17, 18, 3));
  EXPECT_THAT(e.type_ids, ElementsAre(0, 0, 0, 0));
  e = t->EncodeTruncated("hello world", false, 1);
  EXPECT_THAT(e.ids, ElementsAre(17));
  e = t->EncodeTruncated("hello", true, 16);
  EXPECT_THAT(e.ids, ElementsAre(2, 17, 3));
}

TEST(WordPieceTokenizerTest, TypeIdsComeFromTheTemplate) {
  std::string json = testing::BertTokenizerJson();
  const std::string from = R"({"Sequence": {"id": "A", "type_id": 0}})";
  json.replace(json.find(from), from.size(), R"({"Sequence": {"id": "A", "type_id": 1}})");
  auto t = Tokenizer::FromJson(json);
  ASSERT_TRUE(t.ok()) << t.status();
  Encoding e = (*t)->EncodeTruncated("hello world", true, 8);
  EXPECT_THAT(e.type_ids, ElementsAre(0, 1, 1, 0));
}

TEST(WordPieceTokenizerTest, BertProcessingAddsClsAndSep) {
  std::string json = testing::BertTokenizerJson();
  const size_t a = json.find(R"("post_processor")"), b = json.find(R"("decoder")");
  json.replace(a, b - a, R"("post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}, )");
  auto t = Tokenizer::FromJson(json);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT((*t)->Encode("hello", true), ElementsAre(2, 17, 3));
}

TEST(WordPieceTokenizerTest, DecodesJoiningSubwords) {
  auto t = Bert();
  EXPECT_EQ(t->Decode({2, 6, 7, 8, 10, 17, 11, 3}), "unaffable, hello!");
  EXPECT_EQ(t->Decode({2, 17, 3}, /*skip_special_tokens=*/false), "[CLS] hello [SEP]");
}

}  // namespace
}  // namespace infera::text
