// UTF-8 and the few Unicode properties the tokenizer needs.
//
// Categories come from generated tables (unicode_tables.cc, Unicode 14.0): letters
// (\p{L}), numbers (\p{N}); whitespace is the White_Space property (\s in the
// Oniguruma patterns Hugging Face tokenizers use). Also the GPT-2 byte-level alphabet
// (every byte mapped to a printable code point).
//
// Thread-safe (pure functions and immutable tables).
#ifndef INFERA_LLM_UNICODE_H_
#define INFERA_LLM_UNICODE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infera::llm {

struct CodepointRange {
  char32_t first, last;
};

namespace unicode_internal {
extern const CodepointRange kLetterRanges[];
extern const size_t kLetterRangesSize;
extern const CodepointRange kNumberRanges[];
extern const size_t kNumberRangesSize;
}  // namespace unicode_internal

bool IsLetter(char32_t c);
bool IsNumber(char32_t c);
bool IsWhitespace(char32_t c);

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

}  // namespace infera::llm

#endif  // INFERA_LLM_UNICODE_H_
