#include "guided/json_key_exclusion.h"

#include <map>
#include <memory>

#include "common/str_cat.h"

namespace infera::guided {
namespace {

struct TrieNode {
  bool terminal = false;
  std::map<uint32_t, std::unique_ptr<TrieNode>> children;
};

CodePointSet PlainChars() {
  return CodePointSet::All()
      .Minus(CodePointSet::Between(0, 0x1F))
      .Minus(CodePointSet::Of('"'))
      .Minus(CodePointSet::Of('\\'));
}

// The rule for the rest of a key that has spelled `node`'s prefix so far.
std::string NodeRule(GbnfRules& rules, const TrieNode& node, const std::string& free_rest) {
  const CodePointSet plain = PlainChars();
  std::vector<std::string> alts;
  if (!node.terminal) alts.push_back("\"\"");
  CodePointSet leave = plain;
  for (const auto& [c, child] : node.children) {
    if (!plain.Contains(c)) continue;  // a name with an escaped character: no key reaches it
    leave = leave.Minus(CodePointSet::Of(c));
    alts.push_back(StrCat(GbnfLiteral(Utf8Encode(c)), " ", NodeRule(rules, *child, free_rest)));
  }
  if (!leave.empty()) alts.push_back(StrCat(GbnfClass(leave), " ", free_rest));
  return rules.Add("key-rest", StrJoin(alts, " | "));
}

}  // namespace

std::string JsonKeyOtherThan(GbnfRules& rules, const std::vector<std::string>& names) {
  TrieNode root;
  for (const std::string& name : names) {
    TrieNode* node = &root;
    for (uint32_t c : Utf8Decode(name)) {
      auto& child = node->children[c];
      if (!child) child = std::make_unique<TrieNode>();
      node = child.get();
    }
    node->terminal = true;
  }
  std::string free_rest = rules.Add("key-char", GbnfRepeat(GbnfClass(PlainChars()), 0, -1));
  std::string body = NodeRule(rules, root, free_rest);
  return rules.Add("extra-key", StrCat("\"\\\"\" ", body, " \"\\\"\""));
}

}  // namespace infera::guided
