#include "grammar/gbnf_parser.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/str_cat.h"
#include "grammar/utf8_ranges.h"

namespace infera::grammar {
namespace {

using Sequence = std::vector<Element>;
using CodeRange = std::pair<uint32_t, uint32_t>;

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return std::string(1, c);
  static const char kHex[] = "0123456789abcdef";
  return StrCat("\\x", std::string(1, kHex[u >> 4]), std::string(1, kHex[u & 15]));
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<Grammar> Parse() {
    if (!ParseRules()) return error_;
    for (size_t id = 0; id < rules_.size(); ++id) {
      if (!rules_[id].defined) {
        Fail(rules_[id].first_use, StrCat("undefined rule '", names_[id], "'"));
        return error_;
      }
    }
    auto root = ids_.find("root");
    if (root == ids_.end()) {
      Fail(0, "the grammar has no 'root' rule (where matching starts)");
      return error_;
    }
    Grammar g;
    g.root = root->second;
    g.byte_sets = std::move(sets_);
    g.rule_names = std::move(names_);
    g.rules.resize(rules_.size());
    for (size_t id = 0; id < rules_.size(); ++id) {
      for (const Sequence& alt : rules_[id].alts) {
        g.rules[id].push_back(static_cast<int32_t>(g.elements.size()));
        g.elements.insert(g.elements.end(), alt.begin(), alt.end());
        g.elements.push_back({ElementType::kEnd, 0});
      }
    }
    if (absl::Status s = CheckNoLeftRecursion(g); !s.ok()) return s;
    return g;
  }

 private:
  struct RuleDef {
    std::vector<Sequence> alts;
    bool defined = false;
    size_t first_use = 0;
  };

  bool Fail(size_t offset, std::string_view problem) {
    if (!error_.ok()) return false;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    error_ = absl::InvalidArgumentError(StrCat("grammar: line ", line, ", column ", col, ": ", problem));
    return false;
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipSpace() {
    while (!AtEnd()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  std::string_view ParseName() {
    const size_t start = pos_;
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  // The rule called `name`, created on first sight (a reference before the definition).
  bool RuleId(std::string_view name, size_t offset, int32_t* id) {
    auto it = ids_.find(std::string(name));
    if (it != ids_.end()) {
      *id = it->second;
      return true;
    }
    if (!NewRule(std::string(name), offset, id)) return false;
    ids_.emplace(std::string(name), *id);
    return true;
  }

  bool NewRule(std::string name, size_t offset, int32_t* id) {
    if (rules_.size() >= static_cast<size_t>(kMaxRules)) {
      return Fail(offset, StrCat("the grammar expands to more than ", kMaxRules, " rules"));
    }
    *id = static_cast<int32_t>(rules_.size());
    rules_.push_back({});
    rules_.back().first_use = offset;
    names_.push_back(std::move(name));
    return true;
  }

  // A rule made by the parser (a group, a repetition, a class): "<rule>_<id>".
  bool SyntheticRule(std::vector<Sequence> alts, size_t offset, int32_t* id) {
    if (!NewRule("", offset, id)) return false;
    names_[*id] = StrCat(current_rule_, "_", *id);
    rules_[*id].alts = std::move(alts);
    rules_[*id].defined = true;
    return true;
  }

  bool Count(size_t n, size_t offset) {
    num_elements_ += n;
    if (num_elements_ > static_cast<size_t>(kMaxElements)) {
      return Fail(offset, StrCat("the grammar expands to more than ", kMaxElements, " elements"));
    }
    return true;
  }

  bool Append(Sequence& seq, const Element& e, size_t offset) {
    if (!Count(1, offset)) return false;
    seq.push_back(e);
    return true;
  }

  int32_t ByteSetId(const ByteSet& set) {
    auto [it, inserted] = set_ids_.emplace(set.bits, static_cast<int32_t>(sets_.size()));
    if (inserted) sets_.push_back(set);
    return it->second;
  }

  bool ByteElement(const ByteSet& set, size_t offset, Element* e) {
    if (sets_.size() >= static_cast<size_t>(kMaxByteSets) && !set_ids_.contains(set.bits)) {
      return Fail(offset, StrCat("the grammar has more than ", kMaxByteSets, " distinct byte sets"));
    }
    *e = {ElementType::kByteSet, ByteSetId(set)};
    return true;
  }

  bool ParseRules() {
    SkipSpace();
    while (!AtEnd()) {
      const size_t start = pos_;
      const std::string_view name = ParseName();
      if (name.empty()) return Fail(pos_, StrCat("expected a rule name, found '", Printable(Peek()), "'"));
      SkipSpace();
      if (text_.substr(pos_, 3) != "::=") {
        return Fail(pos_, StrCat("expected '::=' after the rule name '", name, "'"));
      }
      pos_ += 3;
      int32_t id;
      if (!RuleId(name, start, &id)) return false;
      if (rules_[id].defined) return Fail(start, StrCat("rule '", name, "' is defined twice"));
      rules_[id].defined = true;  // before its body: a self-reference is not "undefined"
      current_rule_ = std::string(name);
      std::vector<Sequence> alts;
      if (!ParseAlternates(false, &alts)) return false;
      rules_[id].alts = std::move(alts);
      SkipSpace();
    }
    return true;
  }

  bool ParseAlternates(bool nested, std::vector<Sequence>* alts) {
    alts->emplace_back();
    if (!ParseSequence(nested, &alts->back())) return false;
    while (Peek() == '|') {
      ++pos_;
      alts->emplace_back();
      if (!ParseSequence(nested, &alts->back())) return false;
    }
    return true;
  }

  bool ParseSequence(bool nested, Sequence* seq) {
    size_t last_start = 0;  // where the last symbol (what a repetition repeats) starts
    bool have_last = false;
    while (true) {
      SkipSpace();
      if (AtEnd()) break;
      const size_t at = pos_;
      const char c = Peek();
      if (c == '|' || c == ')') break;
      if (c == '"') {
        last_start = seq->size();
        if (!ParseLiteral(seq)) return false;
        have_last = true;
      } else if (c == '[') {
        last_start = seq->size();
        if (!ParseClass(seq)) return false;
        have_last = true;
      } else if (c == '.') {
        ++pos_;
        last_start = seq->size();
        if (!AppendCodeRanges({{0, kMaxCodePoint}}, at, seq)) return false;
        have_last = true;
      } else if (c == '(') {
        ++pos_;
        if (++nesting_ > kMaxNesting) return Fail(at, StrCat("parentheses nested deeper than ", kMaxNesting));
        std::vector<Sequence> alts;
        if (!ParseAlternates(true, &alts)) return false;
        if (Peek() != ')') return Fail(pos_, "expected ')' to close the '(' group");
        ++pos_;
        --nesting_;
        int32_t id;
        if (!SyntheticRule(std::move(alts), at, &id)) return false;
        last_start = seq->size();
        if (!Append(*seq, {ElementType::kRuleRef, id}, at)) return false;
        have_last = true;
      } else if (IsNameChar(c)) {
        const std::string_view name = ParseName();
        const size_t after = pos_;
        SkipSpace();
        if (text_.substr(pos_, 3) == "::=") {  // the next rule starts
          if (nested) return Fail(at, "expected ')' before the next rule");
          pos_ = at;
          break;
        }
        pos_ = after;
        int32_t id;
        if (!RuleId(name, at, &id)) return false;
        last_start = seq->size();
        if (!Append(*seq, {ElementType::kRuleRef, id}, at)) return false;
        have_last = true;
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (!have_last) return Fail(at, StrCat("'", std::string(1, c), "' has nothing before it to repeat"));
        if (!ParseRepetition(seq, last_start)) return false;
      } else {
        return Fail(at, StrCat("unexpected character '", Printable(c), "'"));
      }
    }
    return true;
  }

  // An escape after '\': the code point it stands for.
  bool ParseEscape(uint32_t* cp) {
    const size_t at = pos_ - 1;
    if (AtEnd()) return Fail(at, "the text ends inside an escape");
    const char c = text_[pos_++];
    int digits = 0;
    switch (c) {
      case 'n': *cp = '\n'; return true;
      case 'r': *cp = '\r'; return true;
      case 't': *cp = '\t'; return true;
      case '\\': case '"': case '\'': case '[': case ']': case '-': case '^': case '/':
        *cp = static_cast<unsigned char>(c);
        return true;
      case 'x': digits = 2; break;
      case 'u': digits = 4; break;
      case 'U': digits = 8; break;
      default:
        return Fail(at, StrCat("bad escape '\\", Printable(c), "'"));
    }
    uint64_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const int h = HexValue(Peek());
      if (h < 0) return Fail(at, StrCat("bad escape: '\\", std::string(1, c), "' needs ", digits, " hex digits"));
      v = v * 16 + h;
      ++pos_;
    }
    if (v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF)) {
      return Fail(at, "bad escape: not a Unicode scalar value (past U+10FFFF or a surrogate)");
    }
    *cp = static_cast<uint32_t>(v);
    return true;
  }

  // One character of a class: an escape or one UTF-8 encoded code point.
  bool ParseClassChar(uint32_t* cp) {
    const size_t at = pos_;
    const auto b0 = static_cast<unsigned char>(text_[pos_++]);
    if (b0 == '\\') return ParseEscape(cp);
    if (b0 < 0x80) {
      *cp = b0;
      return true;
    }
    const int n = b0 >= 0xF0 && b0 <= 0xF4 ? 3 : b0 >= 0xE0 ? (b0 < 0xF0 ? 2 : -1) : b0 >= 0xC2 ? 1 : -1;
    if (n < 0) return Fail(at, "invalid UTF-8 in a character class");
    uint32_t v = b0 & (0x3F >> n);
    for (int i = 0; i < n; ++i) {
      const auto b = static_cast<unsigned char>(Peek());
      if ((b & 0xC0) != 0x80) return Fail(at, "invalid UTF-8 in a character class");
      v = (v << 6) | (b & 0x3F);
      ++pos_;
    }
    const uint32_t min = n == 1 ? 0x80 : n == 2 ? 0x800 : 0x10000;
    if (v < min || v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF)) {
      return Fail(at, "invalid UTF-8 in a character class");
    }
    *cp = v;
    return true;
  }

  bool ParseLiteral(Sequence* seq) {
    const size_t open = pos_++;
    std::string bytes;
    while (true) {
      if (AtEnd()) return Fail(open, "unterminated string literal");
      const char c = text_[pos_++];
      if (c == '"') break;
      if (c == '\\') {
        uint32_t cp;
        if (!ParseEscape(&cp)) return false;
        AppendUtf8(cp, bytes);
      } else {
        bytes.push_back(c);
      }
    }
    if (!Count(bytes.size(), open)) return false;
    for (char b : bytes) {
      ByteSet set;
      set.Add(static_cast<uint8_t>(b));
      Element e;
      if (!ByteElement(set, open, &e)) return false;
      seq->push_back(e);
    }
    return true;
  }

  bool ParseClass(Sequence* seq) {
    const size_t open = pos_++;
    const bool negated = Peek() == '^';
    if (negated) ++pos_;
    std::vector<CodeRange> ranges;
    while (true) {
      if (AtEnd()) return Fail(open, "unterminated character class (no ']')");
      if (Peek() == ']') {
        ++pos_;
        break;
      }
      const size_t at = pos_;
      uint32_t lo, hi;
      if (!ParseClassChar(&lo)) return false;
      hi = lo;
      if (Peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        if (!ParseClassChar(&hi)) return false;
        if (hi < lo) return Fail(at, "character range out of order (the end is before the start)");
      }
      ranges.push_back({lo, hi});
    }
    if (ranges.empty()) return Fail(open, "empty character class");
    std::sort(ranges.begin(), ranges.end());
    std::vector<CodeRange> merged;
    for (const CodeRange& r : ranges) {
      if (!merged.empty() && r.first <= merged.back().second + 1) {
        merged.back().second = std::max(merged.back().second, r.second);
      } else {
        merged.push_back(r);
      }
    }
    if (negated) {
      std::vector<CodeRange> complement;
      uint32_t next = 0;
      for (const CodeRange& r : merged) {
        if (r.first > next) complement.push_back({next, r.first - 1});
        next = r.second + 1;
      }
      if (next <= kMaxCodePoint) complement.push_back({next, kMaxCodePoint});
      merged = std::move(complement);
    }
    return AppendCodeRanges(merged, open, seq);
  }

  // The code points in `ranges` (sorted, disjoint) as one element (ASCII only) or a
  // synthetic rule: one alternative for the ASCII bytes, one per multi-byte sequence
  // (those differing only in their first byte merged).
  bool AppendCodeRanges(const std::vector<CodeRange>& ranges, size_t at, Sequence* seq) {
    std::vector<ByteRangeSequence> seqs;
    for (const CodeRange& r : ranges) Utf8Sequences(r.first, r.second, seqs);
    ByteSet ascii;
    bool has_ascii = false;
    std::map<ByteRangeSequence, ByteSet> by_tail;  // ranges after the first byte → first bytes
    for (const ByteRangeSequence& s : seqs) {
      if (s.size() == 1) {
        ascii.AddRange(s[0].first, s[0].second);
        has_ascii = true;
      } else {
        by_tail[ByteRangeSequence(s.begin() + 1, s.end())].AddRange(s[0].first, s[0].second);
      }
    }
    if (!has_ascii && by_tail.empty()) return Fail(at, "character class matches nothing");
    Element e;
    if (by_tail.empty()) {
      if (!ByteElement(ascii, at, &e)) return false;
      return Append(*seq, e, at);
    }
    std::vector<Sequence> alts;
    if (has_ascii) {
      if (!ByteElement(ascii, at, &e)) return false;
      alts.push_back({e});
    }
    for (const auto& [tail, first] : by_tail) {
      Sequence alt;
      if (!ByteElement(first, at, &e)) return false;
      alt.push_back(e);
      for (const auto& [lo, hi] : tail) {
        ByteSet set;
        set.AddRange(lo, hi);
        if (!ByteElement(set, at, &e)) return false;
        alt.push_back(e);
      }
      if (!Count(alt.size(), at)) return false;
      alts.push_back(std::move(alt));
    }
    int32_t id;
    if (!SyntheticRule(std::move(alts), at, &id)) return false;
    return Append(*seq, {ElementType::kRuleRef, id}, at);
  }

  bool ParseInt(int64_t* v) {
    const size_t at = pos_;
    if (Peek() < '0' || Peek() > '9') return Fail(at, "expected a number in '{m,n}'");
    *v = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      *v = *v * 10 + (Peek() - '0');
      ++pos_;
      if (*v > kMaxRepetition) {
        return Fail(at, StrCat("repetition bound too large (the limit is ", kMaxRepetition, ")"));
      }
    }
    return true;
  }

  // `*`, `+`, `?` or `{m}`, `{m,}`, `{m,n}`, `{,n}` after the symbol at seq[last_start..].
  bool ParseRepetition(Sequence* seq, size_t last_start) {
    const size_t at = pos_;
    const char op = text_[pos_++];
    int64_t min = 0, max = -1;  // -1: unbounded
    if (op == '+') {
      min = 1;
    } else if (op == '?') {
      max = 1;
    } else if (op == '{') {
      SkipSpace();
      if (Peek() != ',' && !ParseInt(&min)) return false;
      SkipSpace();
      if (Peek() == '}') {
        max = min;
      } else {
        if (Peek() != ',') return Fail(pos_, "expected ',' or '}' in '{m,n}'");
        ++pos_;
        SkipSpace();
        if (Peek() != '}' && !ParseInt(&max)) return false;
        SkipSpace();
      }
      if (Peek() != '}') return Fail(pos_, "expected '}' to close '{m,n}'");
      ++pos_;
      if (max >= 0 && max < min) return Fail(at, "repetition '{m,n}' with n < m");
    }
    Sequence item(seq->begin() + static_cast<std::ptrdiff_t>(last_start), seq->end());
    seq->resize(last_start);
    if (item.empty()) return true;  // "" repeated is still ""
    if (item.size() > 1) {  // copies below are one reference each
      int32_t id;
      if (!SyntheticRule({item}, at, &id)) return false;
      item = {{ElementType::kRuleRef, id}};
    }
    for (int64_t i = 0; i < min; ++i) {
      if (!Append(*seq, item[0], at)) return false;
    }
    if (max < 0) {  // R ::= item R | ε
      int32_t id;
      if (!SyntheticRule({}, at, &id)) return false;
      rules_[id].alts = {{item[0], {ElementType::kRuleRef, id}}, {}};
      if (!Count(2, at)) return false;
      return Append(*seq, {ElementType::kRuleRef, id}, at);
    }
    // max - min optional copies, nested: R1 ::= item | ε, Rk ::= item R(k-1) | ε.
    int32_t inner = -1;
    for (int64_t k = 0; k < max - min; ++k) {
      Sequence first{item[0]};
      if (inner >= 0) first.push_back({ElementType::kRuleRef, inner});
      if (!Count(first.size(), at)) return false;
      if (!SyntheticRule({first, {}}, at, &inner)) return false;
    }
    if (inner >= 0) return Append(*seq, {ElementType::kRuleRef, inner}, at);
    return true;
  }

  static constexpr int kMaxNesting = 256;
  std::string_view text_;
  size_t pos_ = 0;
  int nesting_ = 0;
  size_t num_elements_ = 0;
  std::string current_rule_;
  absl::Status error_;
  std::vector<RuleDef> rules_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<ByteSet> sets_;
  std::map<std::array<uint64_t, 4>, int32_t> set_ids_;
};

}  // namespace

absl::StatusOr<Grammar> ParseGbnf(std::string_view text) { return Parser(text).Parse(); }

}  // namespace infera::grammar
