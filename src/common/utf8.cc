#include "common/utf8.h"

#include <cstdint>
#include <cstring>

namespace infera {
namespace {

// Length of the well-formed UTF-8 sequence starting at `p` (1 to 4), or 0 when the bytes
// at `p` do not start one. REQUIRES: p < end.
size_t SequenceLength(const uint8_t* p, const uint8_t* end) {
  const uint8_t c = *p;
  if (c < 0x80) return 1;
  // Table 3-7 of the Unicode standard: the allowed range of the second byte depends on
  // the lead byte; that rules out overlongs, surrogates and code points > U+10FFFF.
  size_t length;
  uint8_t lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;  // continuation byte as lead, 0xc0/0xc1 overlongs, or > 0xf4
  }
  if (static_cast<size_t>(end - p) < length) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < length; ++i) {
    if ((p[i] & 0xc0) != 0x80) return 0;
  }
  return length;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const uint8_t* const end = p + text.size();
  while (p < end) {
    // Skip ASCII eight bytes at a time: most strings are plain ASCII.
    if (end - p >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        p += 8;
        continue;
      }
    }
    const size_t length = SequenceLength(p, end);
    if (length == 0) return false;
    p += length;
  }
  return true;
}

std::string ReplaceInvalidUtf8(std::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  static constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD
  std::string out;
  out.reserve(text.size() + 16);
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const uint8_t* const end = p + text.size();
  while (p < end) {
    const size_t length = SequenceLength(p, end);
    if (length == 0) {
      out += kReplacement;
      ++p;
    } else {
      out.append(reinterpret_cast<const char*>(p), length);
      p += length;
    }
  }
  return out;
}

}  // namespace infera
