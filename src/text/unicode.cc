#include "text/unicode.h"

#include <algorithm>
#include <array>

namespace infera::text {
namespace {

bool InRanges(char32_t c, const CodepointRange* ranges, size_t n) {
  const CodepointRange* end = ranges + n;
  const CodepointRange* it = std::upper_bound(
      ranges, end, c, [](char32_t v, const CodepointRange& r) { return v < r.first; });
  return it != ranges && c <= (it - 1)->last;
}

// Length of the valid UTF-8 sequence at `s[i]`: >0 valid length, 0 invalid byte,
// -k: a valid but truncated sequence of k bytes reaching the end of `s`.
int SequenceLength(std::string_view s, size_t i, char32_t* out) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  int len;
  char32_t c;
  if (b0 < 0x80) {
    *out = b0;
    return 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, c = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, c = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, c = b0 & 0x07;
  } else {
    return 0;
  }
  for (int k = 1; k < len; ++k) {
    if (i + k >= s.size()) return -k;
    const auto b = static_cast<uint8_t>(s[i + k]);
    // Second-byte limits exclude overlongs, surrogates and > U+10FFFF.
    uint8_t lo = 0x80, hi = 0xBF;
    if (k == 1 && b0 == 0xE0) lo = 0xA0;
    if (k == 1 && b0 == 0xED) hi = 0x9F;
    if (k == 1 && b0 == 0xF0) lo = 0x90;
    if (k == 1 && b0 == 0xF4) hi = 0x8F;
    if (b < lo || b > hi) return 0;
    c = (c << 6) | (b & 0x3F);
  }
  *out = c;
  return len;
}

struct ByteTables {
  std::array<char32_t, 256> to_unicode{};
  std::array<int, 324> to_byte{};  // the alphabet lies below U+0144
};

const ByteTables& GetByteTables() {
  static const ByteTables tables = [] {
    ByteTables t;
    t.to_byte.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t.to_unicode[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      t.to_byte[t.to_unicode[b]] = b;
    }
    return t;
  }();
  return tables;
}

}  // namespace

bool IsOtherCategory(char32_t c) {
  return InRanges(c, unicode_internal::kOtherRanges, unicode_internal::kOtherRangesSize);
}

bool IsPunctuation(char32_t c) {
  return InRanges(c, unicode_internal::kPunctuationRanges, unicode_internal::kPunctuationRangesSize);
}

bool IsNonspacingMark(char32_t c) {
  return InRanges(c, unicode_internal::kNonspacingMarkRanges, unicode_internal::kNonspacingMarkRangesSize);
}

bool IsCjkIdeograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

void AppendCanonicalDecomposition(char32_t c, std::u32string& out) {
  // Hangul syllables (Unicode 3.12): S = SBase + (L * VCount + V) * TCount + T.
  constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
  constexpr char32_t kVCount = 21, kTCount = 28, kSCount = 19 * kVCount * kTCount;
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t s = c - kSBase;
    out.push_back(kLBase + s / (kVCount * kTCount));
    out.push_back(kVBase + (s % (kVCount * kTCount)) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  using unicode_internal::kDecompositions;
  const auto* end = kDecompositions + unicode_internal::kDecompositionsSize;
  const auto* it = std::lower_bound(kDecompositions, end, c, [](const unicode_internal::Decomposition& d,
                                                                char32_t v) { return d.code_point < v; });
  if (it == end || it->code_point != c) {
    out.push_back(c);
    return;
  }
  out.append(unicode_internal::kDecompositionData + it->offset, it->length);
}

void AppendLowercase(char32_t c, std::u32string& out) {
  if (c < 0x80) {
    out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return;
  }
  using unicode_internal::kLowercase;
  const auto* end = kLowercase + unicode_internal::kLowercaseSize;
  const auto* it = std::lower_bound(kLowercase, end, c, [](const unicode_internal::LowercaseMapping& m,
                                                           char32_t v) { return m.code_point < v; });
  if (it == end || it->code_point != c) {
    out.push_back(c);
    return;
  }
  out.push_back(it->first);
  if (it->second != 0) out.push_back(it->second);
}

bool IsLetter(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return InRanges(c, unicode_internal::kLetterRanges, unicode_internal::kLetterRangesSize);
}

bool IsNumber(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return InRanges(c, unicode_internal::kNumberRanges, unicode_internal::kNumberRangesSize);
}

bool IsWhitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

std::u32string DecodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const int len = SequenceLength(text, i, &c);
    if (len > 0) {
      out.push_back(c);
      i += len;
    } else {
      out.push_back(0xFFFD);
      ++i;
    }
  }
  return out;
}

void AppendUtf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string EncodeUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) AppendUtf8(c, out);
  return out;
}

size_t CompleteUtf8Prefix(std::string_view bytes, size_t* incomplete_tail) {
  size_t i = 0;
  *incomplete_tail = 0;
  while (i < bytes.size()) {
    char32_t c;
    const int len = SequenceLength(bytes, i, &c);
    if (len < 0) {
      *incomplete_tail = bytes.size() - i;
      return i;
    }
    i += len > 0 ? len : 1;
  }
  return i;
}

std::string SanitizeUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    char32_t c;
    const int len = SequenceLength(bytes, i, &c);
    if (len > 0) {
      out.append(bytes.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

char32_t ByteToUnicode(uint8_t b) { return GetByteTables().to_unicode[b]; }

int UnicodeToByte(char32_t c) {
  const auto& t = GetByteTables().to_byte;
  return c < t.size() ? t[c] : -1;
}

}  // namespace infera::text
