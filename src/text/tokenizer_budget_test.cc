// Tokenisation with a budget (Tokenizer::EncodeWithin, EncodeTruncated's early stop) and
// the bytes-per-token bound that lets a prompt's length be checked before tokenising.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "text/normalizer.h"
#include "text/test_tokenizers.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

namespace infera::text {
namespace {

using ::testing::Optional;

std::unique_ptr<Tokenizer> Load(const std::string& json, std::string_view config = "") {
  auto t = Tokenizer::FromJson(json, config);
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

std::unique_ptr<Tokenizer> SentencePiece() {
  return Load(testing::SentencePieceTokenizerJson(), R"({"bos_token": "<s>", "add_bos_token": true})");
}
std::unique_ptr<Tokenizer> ByteLevel() { return Load(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer)); }
std::unique_ptr<Tokenizer> Bert() { return Load(testing::BertTokenizerJson()); }
// Llama-3's shape: Split with the cl100k regex, then ByteLevel without its own regex.
std::unique_ptr<Tokenizer> Llama3Style() {
  std::string split = R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": ")";
  for (char c : std::string(R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)")) {
    if (c == '\\' || c == '"') split += '\\';
    split += c;
  }
  split += R"("}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})";
  return Load(testing::ByteLevelTokenizerJson(split));
}

// Texts with added tokens, whitespace runs, bytes outside the vocabularies, long words.
const std::vector<std::string>& Texts() {
  static const std::vector<std::string> texts = {
      "",
      "hello",
      "hello world, the theme",
      "  hello   world  ",
      "<s>hello</s> world<|endoftext|>the<|im_start|>",
      "caf\u00e9 \u65e5\u672c \U0001F600 run running unaffable",
      std::string(300, 'l') + " " + std::string(50, ' ') + "hello",
      "the the the the the the the the the the the the the the the the the the",
      "[CLS] hello [SEP] world [UNK] \t\n\r x",
  };
  return texts;
}

TEST(TokenizerBudgetTest, BytesPerTokenIsTheLongestPieceWhereNothingCanVanish) {
  // SentencePiece: "▁hello" (8 bytes) is the longest entry; Prepend and Replace(" " → "▁")
  // only grow text; byte fallback covers every byte.
  EXPECT_THAT(SentencePiece()->max_bytes_per_token(), Optional(8u));
  // Byte-level: the added token "<|endoftext|>" (13 bytes) is longer than any entry.
  EXPECT_THAT(ByteLevel()->max_bytes_per_token(), Optional(13u));
  // WordPiece: a long word is one [UNK], whitespace vanishes.
  EXPECT_EQ(Bert()->max_bytes_per_token(), std::nullopt);
}

// The SentencePiece test tokenizer with parts of its tokenizer.json replaced.
std::unique_ptr<Tokenizer> SentencePieceWith(std::vector<std::pair<std::string_view, std::string_view>> edits) {
  std::string json = testing::SentencePieceTokenizerJson();
  for (const auto& [from, to] : edits) {
    const size_t at = json.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) json.replace(at, from.size(), to);
  }
  return Load(json);
}

std::unique_ptr<Tokenizer> Lowercasing() {
  return SentencePieceWith({{R"({"type": "Prepend", "prepend": "▁"})", R"({"type": "Lowercase"})"}});
}
std::unique_ptr<Tokenizer> Decomposing() {
  return SentencePieceWith({{R"({"type": "Prepend", "prepend": "▁"})", R"({"type": "NFD"})"}});
}

TEST(TokenizerBudgetTest, NoBoundWhereTextCanVanishOrOneIdCoversAnyLength) {
  // An added token that absorbs the whitespace after it.
  EXPECT_EQ(SentencePieceWith({{R"("content": "</s>", "special": true, "lstrip": false, "rstrip": false)",
                                R"("content": "</s>", "special": true, "lstrip": false, "rstrip": true)"}})
                ->max_bytes_per_token(),
            std::nullopt);
  // No byte fallback: unknown characters fuse into one <unk> (fuse_unk)...
  EXPECT_EQ(SentencePieceWith({{R"("byte_fallback": true)", R"("byte_fallback": false)"}})->max_bytes_per_token(),
            std::nullopt);
  // ... but without fuse_unk each is one <unk> (up to 4 bytes).
  EXPECT_THAT(SentencePieceWith({{R"("byte_fallback": true)", R"("byte_fallback": false)"},
                                 {R"("fuse_unk": true)", R"("fuse_unk": false)"}})
                  ->max_bytes_per_token(),
              Optional(8u));
  // Replace with nothing drops text; StripAccents drops marks; WhitespaceSplit drops spaces.
  EXPECT_EQ(SentencePieceWith({{R"("content": "▁"})", R"("content": ""})"}})->max_bytes_per_token(), std::nullopt);
  EXPECT_EQ(SentencePieceWith({{R"({"type": "Prepend", "prepend": "▁"})", R"({"type": "StripAccents"})"}})
                ->max_bytes_per_token(),
            std::nullopt);
  EXPECT_EQ(SentencePieceWith({{R"("pre_tokenizer": null)", R"("pre_tokenizer": {"type": "WhitespaceSplit"})"}})
                ->max_bytes_per_token(),
            std::nullopt);
  // Lowercase can shrink text by 3 (U+212A KELVIN SIGN → "k"): the bound grows with it.
  EXPECT_THAT(Lowercasing()->max_bytes_per_token(), Optional(24u));
  EXPECT_THAT(Decomposing()->max_bytes_per_token(), Optional(24u));
}

TEST(TokenizerBudgetTest, EveryTextHasAtLeastItsBytesOverTheBoundInIds) {
  for (auto* make : {&SentencePiece, &ByteLevel, &Lowercasing, &Decomposing}) {
    auto t = make();
    const size_t per_token = *t->max_bytes_per_token();
    std::vector<std::string> texts = Texts();
    // Kelvin and Ohm signs: lowercased or decomposed, 3 bytes become 1 and 2.
    texts.push_back("\u212A\u212A\u212A \u2126\u2126");
    for (const std::string& text : texts) {
      const size_t ids = t->Encode(text, /*add_special_tokens=*/false).size();
      EXPECT_LE(text.size(), per_token * ids) << text;
    }
  }
}

TEST(TokenizerBudgetTest, EncodeWithinIsEncodeOrNothing) {
  for (auto* make : {&SentencePiece, &ByteLevel, &Bert}) {
    auto t = make();
    for (const std::string& text : Texts()) {
      for (bool special : {false, true}) {
        const std::vector<int32_t> all = t->Encode(text, special);
        for (size_t budget : {size_t{0}, all.size() - std::min<size_t>(all.size(), 1), all.size(), all.size() + 1,
                              all.size() + 100}) {
          std::optional<std::vector<int32_t>> within = t->EncodeWithin(text, special, budget);
          if (all.size() <= budget) {
            EXPECT_THAT(within, Optional(all)) << text << " budget " << budget;
          } else {
            EXPECT_EQ(within, std::nullopt) << text << " budget " << budget;
          }
        }
      }
    }
  }
}

TEST(TokenizerBudgetTest, EncodeTruncatedStopsEarlyWithTheSameIds) {
  for (auto* make : {&SentencePiece, &ByteLevel, &Bert}) {
    auto t = make();
    for (const std::string& text : Texts()) {
      const std::vector<int32_t> content = t->Encode(text, /*add_special_tokens=*/false);
      const std::vector<int32_t> full = t->Encode(text, /*add_special_tokens=*/true);
      const size_t specials = full.size() - content.size();
      size_t head = 0;  // special tokens before the content
      while (head < specials && !std::equal(content.begin(), content.end(), full.begin() + head)) ++head;
      for (size_t max_length = specials; max_length <= full.size() + 1; ++max_length) {
        std::vector<int32_t> expected = full;
        if (full.size() > max_length) {
          expected.assign(full.begin(), full.begin() + head);
          expected.insert(expected.end(), content.begin(), content.begin() + (max_length - specials));
          expected.insert(expected.end(), full.end() - (specials - head), full.end());
        }
        const Encoding e = t->EncodeTruncated(text, /*add_special_tokens=*/true, max_length);
        EXPECT_EQ(e.ids, expected) << text << " max_length " << max_length;
        EXPECT_EQ(e.type_ids.size(), e.ids.size());
      }
    }
  }
}

TEST(TokenizerBudgetTest, AHugeTextIsRefusedByItsLengthAndTruncatedByItsStart) {
  // 64 MiB: past the bound, EncodeWithin answers from the length alone (the test would
  // take minutes if it tokenised: it is run under ASan too).
  const std::string huge = std::string(size_t{64} << 20, 'l');
  auto t = SentencePiece();
  EXPECT_EQ(t->EncodeWithin(huge, true, 512), std::nullopt);
  EXPECT_EQ(t->EncodeWithin("hello" + huge, false, 512), std::nullopt);
  // A word of 8 MiB between others, truncated: the first ids only.
  auto bert = Bert();
  const std::string words = "hello world " + std::string(size_t{8} << 20, 'x') + " hello";
  EXPECT_EQ(bert->EncodeTruncated(words, true, 4).ids, (std::vector<int32_t>{2, 17, 18, 3}));
}

TEST(TokenizerBudgetTest, WhitespaceWindowsGiveTheWholeTextsIds) {
  // Past 64 KiB a BERT-style segment is encoded in windows cut at whitespace: the ids must
  // be the whole text's, wherever the cuts fall (words, CJK, punctuation, tabs, accents).
  std::string text;
  const std::vector<std::string> words = {"hello", "world,", "café", "中文", "running!", "\tthe",
                                          "UNAFFABLE", "\n", "a" + std::string(20, 'a'), "x́"};
  for (size_t i = 0; text.size() < (size_t{300} << 10); ++i) text += words[(i * 7) % words.size()] + " ";
  auto t = Bert();
  const std::vector<int32_t> all = t->Encode(text, true);
  EXPECT_THAT(t->EncodeWithin(text, true, all.size()), Optional(all));
  EXPECT_EQ(t->EncodeWithin(text, true, all.size() - 1), std::nullopt);
  for (size_t max_length : {size_t{2}, size_t{100}, all.size() / 2, all.size() - 1}) {
    std::vector<int32_t> expected(all.begin(), all.begin() + (max_length - 1));
    expected.push_back(all.back());  // [SEP]
    EXPECT_EQ(t->EncodeTruncated(text, true, max_length).ids, expected) << max_length;
  }
}

TEST(TokenizerBudgetTest, TinyWindowsCutAnywhereAllowedGiveTheSameIds) {
  // Windows of a few bytes put a cut at nearly every allowed place.
  const std::string mixed =
      "Hello world's  tabs\t\nx 1234567 I'LL go...\n\n(now) caf\u00e9 \u65e5\u672c it's a b c de fg "
      "<|endoftext|>the the<|im_start|> unaffable running  [SEP] hello,world! \U0001F600 zz";
  for (auto* make : {&ByteLevel, &Bert, &Llama3Style}) {
    auto t = make();
    for (size_t window : {size_t{1}, size_t{3}, size_t{16}}) {
      t->set_window_bytes(window);
      std::vector<std::string> texts = Texts();
      texts.push_back(mixed);
      for (const std::string& text : texts) {
        const std::vector<int32_t> all = t->Encode(text, true);
        EXPECT_THAT(t->EncodeWithin(text, true, all.size()), Optional(all)) << text << " window " << window;
        for (size_t max_length = 2; max_length < all.size(); max_length += 3) {
          const std::vector<int32_t> cut = t->EncodeTruncated(text, true, max_length).ids;
          ASSERT_EQ(cut.size(), max_length);
          EXPECT_TRUE(std::equal(cut.begin(), cut.end() - 1, all.begin())) << text << " window " << window;
        }
      }
    }
  }
}

TEST(NormalizerShrinkTest, LowercaseAndNfdShrinkNoCodePointByMoreThanTheirFactors) {
  auto utf8_size = [](const std::u32string& s) { return EncodeUtf8(s).size(); };
  double lowercase = 1, nfd = 1;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;  // surrogates are not characters
    const double bytes = static_cast<double>(utf8_size(std::u32string(1, c)));
    std::u32string lower, decomposed;
    AppendLowercase(c, lower);
    AppendCanonicalDecomposition(c, decomposed);
    lowercase = std::max(lowercase, bytes / static_cast<double>(utf8_size(lower)));
    nfd = std::max(nfd, bytes / static_cast<double>(utf8_size(decomposed)));
  }
  EXPECT_LE(lowercase, kLowercaseMaxShrink);
  EXPECT_LE(nfd, kNfdMaxShrink);
  EXPECT_EQ(lowercase, 3.0);  // U+212A KELVIN SIGN → "k"
  EXPECT_EQ(nfd, 3.0);        // U+212A KELVIN SIGN → "K" (a singleton decomposition)
}

}  // namespace
}  // namespace infera::text
