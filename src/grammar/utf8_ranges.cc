#include "grammar/utf8_ranges.h"

#include <algorithm>

namespace infera::grammar {
namespace {

int EncodedLength(uint32_t cp) { return cp <= 0x7F ? 1 : cp <= 0x7FF ? 2 : cp <= 0xFFFF ? 3 : 4; }

void Encode(uint32_t cp, uint8_t* b) {
  switch (EncodedLength(cp)) {
    case 1:
      b[0] = static_cast<uint8_t>(cp);
      break;
    case 2:
      b[0] = static_cast<uint8_t>(0xC0 | (cp >> 6));
      b[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
      break;
    case 3:
      b[0] = static_cast<uint8_t>(0xE0 | (cp >> 12));
      b[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
      b[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
      break;
    default:
      b[0] = static_cast<uint8_t>(0xF0 | (cp >> 18));
      b[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
      b[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
      b[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

void AppendUtf8(uint32_t cp, std::string& out) {
  uint8_t b[4];
  Encode(cp, b);
  out.append(reinterpret_cast<const char*>(b), EncodedLength(cp));
}

void Utf8Sequences(uint32_t lo, uint32_t hi, std::vector<ByteRangeSequence>& out) {
  // A work list instead of recursion: each entry is split until it is one sequence.
  std::vector<std::pair<uint32_t, uint32_t>> todo{{lo, std::min(hi, kMaxCodePoint)}};
  while (!todo.empty()) {
    auto [a, b] = todo.back();
    todo.pop_back();
    if (a > b) continue;
    if (a <= 0xDFFF && b >= 0xD800) {  // cut the surrogates out
      if (a < 0xD800) todo.push_back({a, 0xD7FF});
      if (b > 0xDFFF) todo.push_back({0xE000, b});
      continue;
    }
    bool split = false;
    for (uint32_t max : {0x7Fu, 0x7FFu, 0xFFFFu}) {  // one encoded length per sequence
      if (a <= max && b > max) {
        todo.push_back({a, max});
        todo.push_back({max + 1, b});
        split = true;
        break;
      }
    }
    if (split) continue;
    const int n = EncodedLength(a);
    for (int i = 1; i < n && !split; ++i) {  // continuation bytes must span 80-BF fully
      const uint32_t m = (uint32_t{1} << (6 * i)) - 1;
      if ((a & ~m) != (b & ~m)) {
        if ((a & m) != 0) {
          todo.push_back({a, a | m});
          todo.push_back({(a | m) + 1, b});
          split = true;
        } else if ((b & m) != m) {
          todo.push_back({a, (b & ~m) - 1});
          todo.push_back({b & ~m, b});
          split = true;
        }
      }
    }
    if (split) continue;
    uint8_t ea[4], eb[4];
    Encode(a, ea);
    Encode(b, eb);
    ByteRangeSequence seq;
    for (int i = 0; i < n; ++i) seq.push_back({ea[i], eb[i]});
    out.push_back(std::move(seq));
  }
}

}  // namespace infera::grammar
