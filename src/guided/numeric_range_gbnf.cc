#include "guided/numeric_range_gbnf.h"

#include <string>
#include <vector>

#include "common/str_cat.h"
#include "guided/gbnf_text.h"

namespace infera::guided {
namespace {

std::string Alternatives(const std::vector<std::string>& alts) {
  if (alts.empty()) return "";
  if (alts.size() == 1) return alts[0];
  return StrCat("(", StrJoin(alts, " | "), ")");
}

std::string Digits(size_t n) {
  if (n == 0) return "";
  return GbnfRepeat("[0-9]", static_cast<long>(n), static_cast<long>(n));
}

std::string DigitClass(char lo, char hi) {
  if (lo == hi) return GbnfLiteral(std::string(1, lo));
  if (lo == '0' && hi == '9') return "[0-9]";
  return StrCat("[", std::string(1, lo), "-", std::string(1, hi), "]");
}

std::string Seq(std::string a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return a;
  return StrCat(a, " ", b);
}

bool All(std::string_view s, char c) { return s.find_first_not_of(c) == std::string_view::npos; }

// The digit strings of s's length between lo and hi (lo <= hi, same length).
std::string SameLength(const std::string& lo, const std::string& hi) {
  if (lo == hi) return GbnfLiteral(lo);
  size_t p = 0;
  while (lo[p] == hi[p]) ++p;
  std::string prefix = p > 0 ? GbnfLiteral(lo.substr(0, p)) : "";
  char lo_d = lo[p], hi_d = hi[p];
  std::string lo_rest = lo.substr(p + 1), hi_rest = hi.substr(p + 1);
  size_t r = lo_rest.size();
  std::vector<std::string> alts;
  char start = lo_d, end = hi_d;
  if (!All(lo_rest, '0')) {
    alts.push_back(Seq(GbnfLiteral(std::string(1, lo_d)), SameLength(lo_rest, std::string(r, '9'))));
    start = static_cast<char>(lo_d + 1);
  }
  std::string upper;
  if (!All(hi_rest, '9')) {
    upper = Seq(GbnfLiteral(std::string(1, hi_d)), SameLength(std::string(r, '0'), hi_rest));
    end = static_cast<char>(hi_d - 1);
  }
  if (start <= end) alts.push_back(Seq(DigitClass(start, end), Digits(r)));
  if (!upper.empty()) alts.push_back(upper);
  return Seq(prefix, Alternatives(alts));
}

// Canonical non-negative integers in [a, b] (b missing: unbounded); a <= b.
std::string NonNegative(int64_t a, std::optional<int64_t> b) {
  std::string as = std::to_string(a);
  std::vector<std::string> alts;
  if (b) {
    std::string bs = std::to_string(*b);
    for (size_t len = as.size(); len <= bs.size(); ++len) {
      std::string lo = len == as.size() ? as : "1" + std::string(len - 1, '0');
      std::string hi = len == bs.size() ? bs : std::string(len, '9');
      alts.push_back(SameLength(lo, hi));
    }
  } else {
    alts.push_back(SameLength(as, std::string(as.size(), '9')));
    alts.push_back(StrCat("[1-9] ", GbnfRepeat("[0-9]", static_cast<long>(as.size()), -1)));
  }
  return Alternatives(alts);
}

// Magnitudes `int ("." frac)?` m with lo <= m (lo < m) and m <= hi (m < hi); lo >= 0.
std::string Magnitude(NumberBound lo, std::optional<NumberBound> hi) {
  const std::string frac_any = "(\".\" [0-9]+)?";
  const std::string frac_zero = "(\".\" \"0\"+)?";
  const std::string frac_nonzero = "\".\" [0-9]* [1-9] [0-9]*";
  std::vector<std::string> alts;
  int64_t start = lo.exclusive ? lo.value + 1 : lo.value;
  if (lo.exclusive && (!hi || lo.value + 1 <= hi->value)) {
    alts.push_back(Seq(GbnfLiteral(std::to_string(lo.value)), frac_nonzero));
  }
  if (!hi) {
    alts.push_back(Seq(NonNegative(start, std::nullopt), frac_any));
  } else {
    if (start <= hi->value - 1) alts.push_back(Seq(NonNegative(start, hi->value - 1), frac_any));
    if (!hi->exclusive && start <= hi->value) {
      alts.push_back(Seq(GbnfLiteral(std::to_string(hi->value)), frac_zero));
    }
  }
  return Alternatives(alts);
}

}  // namespace

std::string IntegerRangeGbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  if (lo && hi && *lo > *hi) return "";
  std::vector<std::string> alts;
  if (!lo || *lo < 0) {  // the negatives: "-" and a magnitude in [max(1, -hi), -lo]
    int64_t mag_lo = hi && *hi < 0 ? -*hi : 1;
    std::optional<int64_t> mag_hi;
    if (lo) mag_hi = -*lo;
    alts.push_back(Seq("\"-\"", GbnfGroup(NonNegative(mag_lo, mag_hi))));
  }
  if (!hi || *hi >= 0) alts.push_back(NonNegative(lo && *lo > 0 ? *lo : 0, hi));
  return Alternatives(alts);
}

std::string NumberRangeGbnf(std::optional<NumberBound> lo, std::optional<NumberBound> hi) {
  if (lo && hi &&
      (lo->value > hi->value || (lo->value == hi->value && (lo->exclusive || hi->exclusive)))) {
    return "";
  }
  std::vector<std::string> alts;
  if (!lo || lo->value < 0) {  // x < 0: "-" and a magnitude m = -x
    NumberBound m_lo = hi && hi->value < 0 ? NumberBound{-hi->value, hi->exclusive}
                                           : NumberBound{0, true};
    std::optional<NumberBound> m_hi;
    if (lo) m_hi = NumberBound{-lo->value, lo->exclusive};
    std::string m = Magnitude(m_lo, m_hi);
    if (!m.empty()) alts.push_back(Seq("\"-\"", GbnfGroup(m)));
  }
  if (!hi || hi->value > 0 || (hi->value == 0 && !hi->exclusive)) {  // x >= 0
    NumberBound m_lo = lo && lo->value >= 0 ? *lo : NumberBound{0, false};
    std::string m = Magnitude(m_lo, hi);
    if (!m.empty()) alts.push_back(m);
  }
  return Alternatives(alts);
}

}  // namespace infera::guided
