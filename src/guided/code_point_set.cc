#include "guided/code_point_set.h"

#include <algorithm>

namespace infera::guided {

CodePointSet CodePointSet::Between(uint32_t lo, uint32_t hi) {
  CodePointSet set;
  set.Add(lo, hi);
  return set;
}

CodePointSet CodePointSet::FromRanges(std::vector<Range> ranges) {
  CodePointSet set;
  for (const Range& r : ranges) {
    if (r.first <= r.second) set.ranges_.push_back(r);
  }
  set.Normalize();
  return set;
}

void CodePointSet::Add(uint32_t lo, uint32_t hi) {
  if (lo > hi) return;
  if (ranges_.empty() || lo > ranges_.back().second + 1) {  // the common, ascending case
    ranges_.emplace_back(lo, hi);
    return;
  }
  ranges_.emplace_back(lo, hi);
  Normalize();
}

void CodePointSet::Normalize() {
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<Range> merged;
  for (const Range& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  ranges_ = std::move(merged);
}

void CodePointSet::Add(const CodePointSet& other) {
  ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());
  Normalize();
}

CodePointSet CodePointSet::Complement() const {
  CodePointSet out;
  uint32_t next = 0;
  for (const Range& r : ranges_) {
    if (r.first > next) out.Add(next, r.first - 1);
    next = r.second + 1;
  }
  if (next <= kMaxCodePoint) out.Add(next, kMaxCodePoint);
  return out.Minus(Between(0xD800, 0xDFFF));
}

CodePointSet CodePointSet::Minus(const CodePointSet& other) const {
  CodePointSet out;
  for (const Range& r : ranges_) {
    uint32_t lo = r.first;
    bool done = false;
    for (const Range& o : other.ranges_) {
      if (o.second < lo || o.first > r.second) continue;
      if (o.first > lo) out.Add(lo, o.first - 1);
      if (o.second >= r.second) {
        done = true;
        break;
      }
      lo = o.second + 1;
    }
    if (!done) out.Add(lo, r.second);
  }
  return out;
}

bool CodePointSet::Contains(uint32_t c) const {
  for (const Range& r : ranges_) {
    if (c >= r.first && c <= r.second) return true;
  }
  return false;
}

}  // namespace infera::guided
