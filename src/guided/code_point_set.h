// CodePointSet: a set of Unicode code points as sorted, disjoint, non-adjacent ranges —
// what a regex character class, `.` or \d denotes, and what a GBNF character class
// writes. The GBNF grammars match code points (llama.cpp's notation decodes UTF-8), so
// classes are sets of code points, not bytes.
//
// A value type; thread-compatible.
#ifndef INFERA_GUIDED_CODE_POINT_SET_H_
#define INFERA_GUIDED_CODE_POINT_SET_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace infera::guided {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

class CodePointSet {
 public:
  using Range = std::pair<uint32_t, uint32_t>;  // inclusive

  CodePointSet() = default;
  static CodePointSet Of(uint32_t c) { return Between(c, c); }
  static CodePointSet Between(uint32_t lo, uint32_t hi);
  // Every code point UTF-8 can carry.
  static CodePointSet All() { return Between(0, kMaxCodePoint).Minus(Between(0xD800, 0xDFFF)); }

  // Any ranges, in any order, overlapping or not: sorted and merged once.
  static CodePointSet FromRanges(std::vector<Range> ranges);

  void Add(uint32_t lo, uint32_t hi);
  void Add(const CodePointSet& other);
  // Every code point (0..U+10FFFF, surrogates excluded: UTF-8 cannot carry them) not in
  // this set.
  CodePointSet Complement() const;
  CodePointSet Minus(const CodePointSet& other) const;
  bool Contains(uint32_t c) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<Range>& ranges() const { return ranges_; }

 private:
  void Normalize();  // sorts and merges ranges_
  std::vector<Range> ranges_;
};

}  // namespace infera::guided

#endif  // INFERA_GUIDED_CODE_POINT_SET_H_
