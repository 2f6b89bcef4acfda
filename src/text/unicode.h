// UTF-8 and the few Unicode properties the tokenizer needs.
//
// Categories come from generated tables (unicode_tables.cc, Unicode 14.0): letters
// (\p{L}), numbers (\p{N}); whitespace is the White_Space property (\s in the
// Oniguruma patterns Hugging Face tokenizers use). Also the GPT-2 byte-level alphabet
// (every byte mapped to a printable code point).
//
// Thread-safe (pure functions and immutable tables).
#ifndef INFERA_TEXT_UNICODE_H_
#define INFERA_TEXT_UNICODE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infera::text {

struct CodepointRange {
  char32_t first, last;
};

namespace unicode_internal {
extern const CodepointRange kLetterRanges[];
extern const size_t kLetterRangesSize;
extern const CodepointRange kNumberRanges[];
extern const size_t kNumberRangesSize;
// unicode_bert_tables.cc (tools/text/gen_bert_tables.py).
struct Decomposition {
  char32_t code_point;
  uint32_t offset, length;  // into kDecompositionData
};
struct LowercaseMapping {
  char32_t code_point, first, second;  // second: 0 when the mapping is one code point
};
extern const CodepointRange kOtherRanges[];
extern const size_t kOtherRangesSize;
extern const CodepointRange kPunctuationRanges[];
extern const size_t kPunctuationRangesSize;
extern const CodepointRange kNonspacingMarkRanges[];
extern const size_t kNonspacingMarkRangesSize;
extern const char32_t kDecompositionData[];
extern const Decomposition kDecompositions[];
extern const size_t kDecompositionsSize;
extern const LowercaseMapping kLowercase[];
extern const size_t kLowercaseSize;
}  // namespace unicode_internal

bool IsLetter(char32_t c);
bool IsNumber(char32_t c);
bool IsWhitespace(char32_t c);
// General category C* (control, format, unassigned, private use, surrogate).
bool IsOtherCategory(char32_t c);
// General category P* (Unicode punctuation; ASCII symbols such as $ + < are S*).
bool IsPunctuation(char32_t c);
// General category Mn (non-spacing marks: the combining accents).
bool IsNonspacingMark(char32_t c);
// The CJK ideograph blocks BERT surrounds with spaces (BertNormalizer
// handle_chinese_chars): U+4E00-9FFF, 3400-4DBF, 20000-2A6DF, 2A700-2B73F, 2B740-2B81F,
// 2B920-2CEAF, F900-FAFF, 2F800-2FA1F.
bool IsCjkIdeograph(char32_t c);
// Appends the canonical decomposition (NFD) of `c` (itself when it has none; Hangul
// syllables algorithmically). Composed sequences of several code points are not
// reordered by combining class (see normalizer.h).
void AppendCanonicalDecomposition(char32_t c, std::u32string& out);
// Appends the lowercase mapping of `c` (Unicode's full mapping, one code point per
// input code point except U+0130; no context-dependent final sigma), as Rust's
// char::to_lowercase, which Hugging Face's Lowercase / BertNormalizer use.
void AppendLowercase(char32_t c, std::u32string& out);

// Decodes UTF-8. Invalid bytes decode as U+FFFD, one per byte, so decoding never fails.
std::u32string DecodeUtf8(std::string_view text);
void AppendUtf8(char32_t c, std::string& out);
std::string EncodeUtf8(std::u32string_view text);

// Length of the longest prefix of `bytes` that is complete, valid UTF-8 plus the
// length of invalid sequences that can never become valid (so callers can replace them).
// `*incomplete_tail` is set to the number of trailing bytes that may still become a
// valid character when more bytes arrive.
size_t CompleteUtf8Prefix(std::string_view bytes, size_t* incomplete_tail);

// Replaces invalid UTF-8 sequences with U+FFFD.
std::string SanitizeUtf8(std::string_view bytes);

// GPT-2 byte-level alphabet: byte b ↔ a printable code point.
char32_t ByteToUnicode(uint8_t b);
// -1 when `c` is not in the alphabet.
int UnicodeToByte(char32_t c);

}  // namespace infera::text

#endif  // INFERA_TEXT_UNICODE_H_
