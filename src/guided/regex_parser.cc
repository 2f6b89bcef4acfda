#include "guided/regex_parser.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/str_cat.h"
#include "common/utf8.h"
#include "guided/gbnf_text.h"
#include "guided/guided_limits.h"

namespace infera::guided {
namespace {

absl::Status Refuse(std::string_view what) {
  return absl::InvalidArgumentError(StrCat("regex: ", what));
}

CodePointSet Digit() { return CodePointSet::Between('0', '9'); }
CodePointSet Word() {
  CodePointSet s = CodePointSet::Between('a', 'z');
  s.Add('A', 'Z');
  s.Add('0', '9');
  s.Add('_', '_');
  return s;
}
// The ASCII members of Python's \s that a match may produce.
CodePointSet Space() {
  CodePointSet s = CodePointSet::Between('\t', '\r');
  s.Add(' ', ' ');
  return s;
}
// Python's Unicode \s within ASCII (includes \x1c-\x1f): what \S must avoid.
CodePointSet SpaceToAvoid() {
  CodePointSet s = Space();
  s.Add(0x1C, 0x1F);
  return s;
}
CodePointSet Ascii() { return CodePointSet::Between(0, 0x7F); }

// How many character items the regex is once its counted repetitions are written out
// (what the engine's expansion of x{m,n} costs), saturating.
double Expanded(const RegexNode& n) {
  switch (n.kind) {
    case RegexNode::Kind::kEmpty: return 0;
    case RegexNode::Kind::kChars: return 1;
    case RegexNode::Kind::kRepeat: {
      double factor = n.max < 0 ? std::max<long>(n.min, 1) : std::max<long>(n.max, 1);
      return factor * Expanded(n.children[0]);
    }
    default: {
      double total = 0;
      for (const auto& c : n.children) total += Expanded(c);
      return total;
    }
  }
}

class Parser {
 public:
  explicit Parser(std::vector<uint32_t> text) : s_(std::move(text)) {}

  absl::StatusOr<ParsedRegex> Parse() {
    ParsedRegex out;
    size_t end = s_.size();
    if (!s_.empty() && s_[0] == '^') {
      out.anchored_start = true;
      pos_ = 1;
    }
    if (end > pos_ && s_[end - 1] == '$' && !EscapedAt(end - 1)) {
      out.anchored_end = true;
      end_ = end - 1;
    } else {
      end_ = end;
    }
    auto root = ParseAlternation();
    if (!root.ok()) return root.status();
    if (pos_ < end_) {
      if (s_[pos_] == ')') return Refuse("unbalanced ')'");
      return Refuse(StrCat("unexpected '", Utf8Encode(s_[pos_]), "'"));
    }
    if ((out.anchored_start || out.anchored_end) && top_level_alternation_) {
      return Refuse("^ or $ around a top-level alternation (a|b): wrap it in a group, ^(a|b)$");
    }
    if (Expanded(*root) > kMaxRegexExpansion) {
      return Refuse(StrCat("its repetitions expand to more than ", kMaxRegexExpansion,
                           " items (the limit)"));
    }
    out.root = std::move(*root);
    return out;
  }

 private:
  // Whether the code point at i is preceded by an odd number of backslashes.
  bool EscapedAt(size_t i) const {
    size_t n = 0;
    while (i > 0 && s_[i - 1] == '\\') {
      ++n;
      --i;
    }
    return n % 2 == 1;
  }
  bool AtEnd() const { return pos_ >= end_; }
  uint32_t Peek() const { return s_[pos_]; }

  absl::StatusOr<RegexNode> ParseAlternation() {
    if (++depth_ > kMaxRegexDepth) {
      return Refuse(StrCat("groups nest deeper than the limit of ", kMaxRegexDepth));
    }
    RegexNode alt;
    alt.kind = RegexNode::Kind::kAlternation;
    while (true) {
      auto branch = ParseConcat();
      if (!branch.ok()) return branch.status();
      alt.children.push_back(std::move(*branch));
      if (AtEnd() || Peek() != '|') break;
      if (depth_ == 1) top_level_alternation_ = true;
      ++pos_;
    }
    --depth_;
    if (alt.children.size() == 1) return std::move(alt.children[0]);
    return alt;
  }

  absl::StatusOr<RegexNode> ParseConcat() {
    RegexNode seq;
    seq.kind = RegexNode::Kind::kConcat;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      auto atom = ParseAtom();
      if (!atom.ok()) return atom.status();
      RegexNode node = std::move(*atom);
      // Quantifiers: at most one per atom (Python: "multiple repeat").
      long min = 0, max = 0;
      auto q = ParseQuantifier(&min, &max);
      if (!q.ok()) return q.status();
      if (*q) {
        if (max > kMaxRepetition || min > kMaxRepetition) {
          return Refuse(StrCat("repetition count above the limit of ", kMaxRepetition));
        }
        if (!AtEnd() && (Peek() == '*' || Peek() == '+' || Peek() == '?' || Peek() == '{')) {
          if (Peek() == '?') {
            ++pos_;  // lazy: the same language
          } else if (Peek() == '+') {
            return Refuse("possessive quantifiers (*+, ++, ?+) are not supported");
          }
          if (!AtEnd() && (Peek() == '*' || Peek() == '+' || Peek() == '?' || IsCountedAt(pos_))) {
            return Refuse("multiple repeat (a quantifier after a quantifier)");
          }
        }
        RegexNode rep;
        rep.kind = RegexNode::Kind::kRepeat;
        rep.min = min;
        rep.max = max;
        rep.children.push_back(std::move(node));
        node = std::move(rep);
      }
      seq.children.push_back(std::move(node));
    }
    if (seq.children.empty()) return RegexNode{};
    if (seq.children.size() == 1) return std::move(seq.children[0]);
    return seq;
  }

  // Whether s_[i] starts a counted quantifier {m}, {m,}, {m,n}, {,n}.
  bool IsCountedAt(size_t i, long* min = nullptr, long* max = nullptr, size_t* next = nullptr) const {
    if (i >= end_ || s_[i] != '{') return false;
    size_t j = i + 1;
    auto number = [&](long* v) {
      size_t start = j;
      long value = 0;
      while (j < end_ && s_[j] >= '0' && s_[j] <= '9') {
        if (value < 1'000'000'000) value = value * 10 + (s_[j] - '0');
        ++j;
      }
      *v = value;
      return j > start;
    };
    long lo = 0, hi = 0;
    bool has_lo = number(&lo);
    if (j < end_ && s_[j] == '}') {
      if (!has_lo) return false;
      hi = lo;
    } else if (j < end_ && s_[j] == ',') {
      ++j;
      bool has_hi = number(&hi);
      if (!has_hi) hi = -1;
      if (!has_lo && !has_hi) return false;
      if (j >= end_ || s_[j] != '}') return false;
    } else {
      return false;
    }
    if (min) *min = lo;
    if (max) *max = hi;
    if (next) *next = j + 1;
    return true;
  }

  absl::StatusOr<bool> ParseQuantifier(long* min, long* max) {
    if (AtEnd()) return false;
    switch (Peek()) {
      case '*': *min = 0; *max = -1; ++pos_; return true;
      case '+': *min = 1; *max = -1; ++pos_; return true;
      case '?': *min = 0; *max = 1; ++pos_; return true;
      default: break;
    }
    size_t next = 0;
    if (IsCountedAt(pos_, min, max, &next)) {
      if (*max >= 0 && *max < *min) return Refuse("a repetition {m,n} with n < m");
      pos_ = next;
      return true;
    }
    return false;
  }

  static RegexNode Chars(CodePointSet set) {
    RegexNode n;
    n.kind = RegexNode::Kind::kChars;
    n.chars = std::move(set);
    return n;
  }

  absl::StatusOr<RegexNode> ParseAtom() {
    uint32_t c = Peek();
    switch (c) {
      case '(': return ParseGroup();
      case '[': return ParseClass();
      case '.': ++pos_; return Chars(CodePointSet::All().Minus(CodePointSet::Of('\n')));
      case '\\': {
        ++pos_;
        auto set = ParseEscape(/*in_class=*/false);
        if (!set.ok()) return set.status();
        return Chars(std::move(*set));
      }
      case '^': return Refuse("^ anywhere but at the start");
      case '$': return Refuse("$ anywhere but at the end");
      case '*': case '+': case '?': return Refuse("nothing to repeat before a quantifier");
      case '{':
        if (IsCountedAt(pos_)) return Refuse("nothing to repeat before a quantifier");
        break;
      default: break;
    }
    ++pos_;
    return Chars(CodePointSet::Of(c));
  }

  absl::StatusOr<RegexNode> ParseGroup() {
    ++pos_;  // (
    if (!AtEnd() && Peek() == '?') {
      ++pos_;
      if (AtEnd()) return Refuse("unterminated group");
      uint32_t k = Peek();
      if (k == ':') {
        ++pos_;
      } else if (k == '=' || k == '!') {
        return Refuse("lookahead (?= / (?! is not supported");
      } else if (k == '<' && pos_ + 1 < end_ && (s_[pos_ + 1] == '=' || s_[pos_ + 1] == '!')) {
        return Refuse("lookbehind (?<= / (?<! is not supported");
      } else if (k == 'P' && pos_ + 1 < end_ && s_[pos_ + 1] == '=') {
        return Refuse("backreference (?P=name) is not supported");
      } else if (k == 'P' || k == '<') {
        pos_ += k == 'P' ? 2 : 1;  // (?P<name> or (?<name>: a group
        if (k == 'P' && (pos_ > end_ || s_[pos_ - 1] != '<')) return Refuse("bad (?P group");
        while (!AtEnd() && Peek() != '>') ++pos_;
        if (AtEnd()) return Refuse("unterminated group name");
        ++pos_;
      } else if (k == '#') {
        return Refuse("comments (?#...) are not supported");
      } else if (k == '>') {
        return Refuse("atomic groups (?>...) are not supported");
      } else if (k == '(') {
        return Refuse("conditional groups (?(...)) are not supported");
      } else {
        return Refuse("inline flags (?i), (?s), ... are not supported");
      }
    }
    auto inner = ParseAlternation();
    if (!inner.ok()) return inner.status();
    if (AtEnd() || Peek() != ')') return Refuse("missing ')'");
    ++pos_;
    return inner;
  }

  absl::StatusOr<uint32_t> ParseHex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      if (AtEnd()) return Refuse("truncated hex escape");
      uint32_t d = Peek();
      int x = d >= '0' && d <= '9' ? d - '0' : d >= 'a' && d <= 'f' ? d - 'a' + 10
              : d >= 'A' && d <= 'F' ? d - 'A' + 10 : -1;
      if (x < 0) return Refuse("bad hex escape");
      v = v * 16 + x;
      ++pos_;
    }
    if (v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF)) return Refuse("escape of an invalid code point");
    return v;
  }

  // After a backslash. Shorthand classes come back as sets; `negated_shorthand` tells the
  // class parser that an ASCII-bounded complement was used.
  absl::StatusOr<CodePointSet> ParseEscape(bool in_class) {
    if (AtEnd()) return Refuse("trailing backslash");
    uint32_t c = Peek();
    ++pos_;
    switch (c) {
      case 'd': return Digit();
      case 'w': return Word();
      case 's': return Space();
      case 'D': return Ascii().Minus(Digit());
      case 'W': return Ascii().Minus(Word());
      case 'S': return Ascii().Minus(SpaceToAvoid());
      case 'n': return CodePointSet::Of('\n');
      case 't': return CodePointSet::Of('\t');
      case 'r': return CodePointSet::Of('\r');
      case 'f': return CodePointSet::Of('\f');
      case 'v': return CodePointSet::Of('\v');
      case 'a': return CodePointSet::Of('\a');
      case '0': return CodePointSet::Of(0);
      case 'x': {
        auto v = ParseHex(2);
        if (!v.ok()) return v.status();
        return CodePointSet::Of(*v);
      }
      case 'u': {
        auto v = ParseHex(4);
        if (!v.ok()) return v.status();
        return CodePointSet::Of(*v);
      }
      case 'U': {
        auto v = ParseHex(8);
        if (!v.ok()) return v.status();
        return CodePointSet::Of(*v);
      }
      case 'b':
        if (in_class) return CodePointSet::Of('\b');
        return Refuse("word boundaries \\b are not supported");
      case 'B': return Refuse("word boundaries \\B are not supported");
      case 'A': case 'Z': case 'z': case 'G':
        return Refuse(StrCat("the anchor \\", std::string(1, static_cast<char>(c)),
                             " is not supported (use ^ and $ at the ends)"));
      case 'p': case 'P': return Refuse("Unicode properties \\p{...} are not supported");
      case 'k': return Refuse("backreferences \\k<name> are not supported");
      default: break;
    }
    if (c >= '1' && c <= '9') return Refuse("backreferences \\1..\\9 are not supported");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      return Refuse(StrCat("unknown escape \\", std::string(1, static_cast<char>(c))));
    }
    return CodePointSet::Of(c);  // an escaped punctuation or other character: itself
  }

  absl::StatusOr<RegexNode> ParseClass() {
    ++pos_;  // [
    bool negated = false;
    if (!AtEnd() && Peek() == '^') {
      negated = true;
      ++pos_;
    }
    std::vector<CodePointSet::Range> items;  // normalized once at the end
    bool shorthand = false;  // \d \w \s ... inside: keep a complement within ASCII
    bool first = true;
    while (true) {
      if (pos_ >= s_.size()) return Refuse("missing ']'");
      uint32_t c = s_[pos_];
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (c == '[' && pos_ + 1 < s_.size() && s_[pos_ + 1] == ':') {
        return Refuse("POSIX classes [[:alpha:]] are not supported");
      }
      ++pos_;
      uint32_t lo = c;
      bool lo_is_single = true;
      if (c == '\\') {
        if (pos_ < s_.size()) {
          uint32_t e = s_[pos_];
          if (e == 'd' || e == 'w' || e == 's' || e == 'D' || e == 'W' || e == 'S') shorthand = true;
        }
        size_t saved_end = end_;
        end_ = s_.size();
        auto esc = ParseEscape(/*in_class=*/true);
        end_ = saved_end;
        if (!esc.ok()) return esc.status();
        if (esc->ranges().size() != 1 || esc->ranges()[0].first != esc->ranges()[0].second) {
          items.insert(items.end(), esc->ranges().begin(), esc->ranges().end());
          lo_is_single = false;
        } else {
          lo = esc->ranges()[0].first;
        }
      }
      if (!lo_is_single) continue;
      // A range lo-hi (a '-' before ']' is a literal '-').
      if (pos_ + 1 < s_.size() && s_[pos_] == '-' && s_[pos_ + 1] != ']') {
        ++pos_;
        uint32_t hi = s_[pos_++];
        if (hi == '\\') {
          size_t saved_end = end_;
          end_ = s_.size();
          auto esc = ParseEscape(/*in_class=*/true);
          end_ = saved_end;
          if (!esc.ok()) return esc.status();
          if (esc->ranges().size() != 1 || esc->ranges()[0].first != esc->ranges()[0].second) {
            return Refuse("a class range ending in a shorthand class");
          }
          hi = esc->ranges()[0].first;
        }
        if (hi < lo) return Refuse("a class range out of order");
        items.emplace_back(lo, hi);
      } else {
        items.emplace_back(lo, lo);
      }
    }
    CodePointSet set = CodePointSet::FromRanges(std::move(items));
    if (pos_ > end_) return Refuse("missing ']'");
    if (negated) set = shorthand ? Ascii().Minus(set) : set.Complement();
    if (set.empty()) return Refuse("a character class that matches nothing");
    return Chars(std::move(set));
  }

  std::vector<uint32_t> s_;
  size_t pos_ = 0;
  size_t end_ = 0;
  int depth_ = 0;
  bool top_level_alternation_ = false;  // a '|' outside every group
};

}  // namespace

absl::StatusOr<ParsedRegex> ParseRegex(std::string_view pattern) {
  if (pattern.size() > kMaxRegexBytes) {
    return Refuse(StrCat("is ", pattern.size(), " bytes, more than the limit of ", kMaxRegexBytes));
  }
  if (!IsValidUtf8(pattern)) return Refuse("is not valid UTF-8");
  return Parser(Utf8Decode(pattern)).Parse();
}

}  // namespace infera::guided
