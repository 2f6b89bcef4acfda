// guided_regex → GBNF, and the regex writer the JSON schema compiler uses for `pattern`.
#include "guided/regex_gbnf.h"

#include <cstdio>
#include <vector>

#include "common/status.h"
#include "common/str_cat.h"
#include "guided/gbnf_text.h"
#include "guided/guided_grammar.h"

namespace infera::guided {
namespace {

// How JSON writes one code point inside a string literal.
std::string JsonEscaped(uint32_t c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
  }
  if (c < 0x20) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
    return buf;
  }
  return Utf8Encode(c);
}

bool IsSingle(const RegexNode& n) {
  return n.kind == RegexNode::Kind::kChars && n.chars.ranges().size() == 1 &&
         n.chars.ranges()[0].first == n.chars.ranges()[0].second;
}

std::string Literal(const std::vector<uint32_t>& run, RegexTarget target) {
  std::string text;
  for (uint32_t c : run) text += target == RegexTarget::kText ? Utf8Encode(c) : JsonEscaped(c);
  return GbnfLiteral(text);
}

}  // namespace

std::string CharSetToGbnf(const CodePointSet& set, RegexTarget target) {
  if (target == RegexTarget::kText) {
    if (set.ranges().size() == 1 && set.ranges()[0].first == set.ranges()[0].second) {
      return GbnfLiteral(Utf8Encode(set.ranges()[0].first));
    }
    return GbnfClass(set);
  }
  CodePointSet needs_escape = CodePointSet::Between(0, 0x1F);
  needs_escape.Add('"', '"');
  needs_escape.Add('\\', '\\');
  CodePointSet plain = set.Minus(needs_escape);
  std::vector<std::string> alts;
  if (!plain.empty()) alts.push_back(CharSetToGbnf(plain, RegexTarget::kText));
  for (const auto& [lo, hi] : set.ranges()) {
    for (uint32_t c = lo; c <= hi && c <= 0x5C; ++c) {
      if (needs_escape.Contains(c)) alts.push_back(GbnfLiteral(JsonEscaped(c)));
    }
  }
  if (alts.size() == 1) return alts[0];
  return StrCat("(", StrJoin(alts, " | "), ")");
}

std::string RegexNodeToGbnf(const RegexNode& node, RegexTarget target) {
  switch (node.kind) {
    case RegexNode::Kind::kEmpty:
      return "\"\"";
    case RegexNode::Kind::kChars:
      return CharSetToGbnf(node.chars, target);
    case RegexNode::Kind::kRepeat:
      return GbnfRepeat(RegexNodeToGbnf(node.children[0], target), node.min, node.max);
    case RegexNode::Kind::kAlternation: {
      std::vector<std::string> alts;
      for (const auto& c : node.children) alts.push_back(RegexNodeToGbnf(c, target));
      return StrCat("(", StrJoin(alts, " | "), ")");
    }
    case RegexNode::Kind::kConcat: {
      std::vector<std::string> parts;
      std::vector<uint32_t> run;  // consecutive single characters become one literal
      for (const auto& c : node.children) {
        if (IsSingle(c)) {
          run.push_back(c.chars.ranges()[0].first);
          continue;
        }
        if (!run.empty()) parts.push_back(Literal(run, target));
        run.clear();
        parts.push_back(GbnfSequenceItem(RegexNodeToGbnf(c, target)));
      }
      if (!run.empty()) parts.push_back(Literal(run, target));
      return StrJoin(parts, " ");
    }
  }
  return "\"\"";
}

absl::StatusOr<std::string> RegexToGbnf(std::string_view regex) {
  // The whole output must match (vLLM's guided_regex): ^ and $ change nothing.
  ASSIGN_OR_RETURN(ParsedRegex parsed, ParseRegex(regex));
  GbnfRules rules;
  rules.Define("root", RegexNodeToGbnf(parsed.root, RegexTarget::kText));
  RETURN_IF_ERROR(rules.CheckSize("guided_regex"));
  return rules.Text();
}

}  // namespace infera::guided
