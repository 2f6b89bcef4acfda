#include "codec/utf8.h"

#include <cstdint>
#include <cstring>

namespace infera {

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
    const uint8_t c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
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
      return false;  // continuation byte as lead, 0xc0/0xc1 overlongs, or > 0xf4
    }
    if (static_cast<size_t>(end - p) < length) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (size_t i = 2; i < length; ++i) {
      if ((p[i] & 0xc0) != 0x80) return false;
    }
    p += length;
  }
  return true;
}

}  // namespace infera
