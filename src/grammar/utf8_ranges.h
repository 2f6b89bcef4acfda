// Utf8Sequences: a range of code points as UTF-8 byte-range sequences, so a character
// class over code points becomes alternatives over bytes (the same split as RE2 and
// Rust's utf8-ranges): [U+0080, U+07FF] is the one sequence [C2-DF][80-BF]. Surrogates
// (U+D800..U+DFFF) are left out: they are not characters and UTF-8 cannot hold them.
// The sequences of disjoint ranges are disjoint, so a class never matches one character
// two ways.
#ifndef INFERA_GRAMMAR_UTF8_RANGES_H_
#define INFERA_GRAMMAR_UTF8_RANGES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace infera::grammar {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// One byte range per position; 1 to 4 positions.
using ByteRangeSequence = std::vector<std::pair<uint8_t, uint8_t>>;

// Appends the sequences matching exactly the code points in [lo, hi] to `out`.
void Utf8Sequences(uint32_t lo, uint32_t hi, std::vector<ByteRangeSequence>& out);

// Appends the UTF-8 encoding of `cp` (REQUIRES: cp <= kMaxCodePoint).
void AppendUtf8(uint32_t cp, std::string& out);

}  // namespace infera::grammar

#endif  // INFERA_GRAMMAR_UTF8_RANGES_H_
