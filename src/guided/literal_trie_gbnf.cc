#include "guided/literal_trie_gbnf.h"

#include <map>
#include <memory>
#include <vector>

#include "common/str_cat.h"

namespace infera::guided {
namespace {

struct Node {
  bool terminal = false;
  std::map<uint32_t, std::unique_ptr<Node>> children;
};

// The expression for what may follow `node` (a sequence; "" when nothing may).
std::string Write(GbnfRules& rules, const Node& node, std::string_view hint) {
  std::vector<std::string> alts;
  if (node.terminal) alts.push_back("\"\"");
  for (const auto& [c, child] : node.children) {
    // Follow the chain of single-child, non-terminal nodes into one literal.
    std::string run = Utf8Encode(c);
    const Node* n = child.get();
    while (!n->terminal && n->children.size() == 1) {
      run += Utf8Encode(n->children.begin()->first);
      n = n->children.begin()->second.get();
    }
    std::string rest = (n->children.empty()) ? "" : Write(rules, *n, hint);
    alts.push_back(rest.empty() ? GbnfLiteral(run) : StrCat(GbnfLiteral(run), " ", rest));
  }
  if (alts.size() == 1) return alts[0] == "\"\"" ? "" : alts[0];
  return rules.Add(hint, StrJoin(alts, " | "));
}

}  // namespace

std::string LiteralTrieGbnf(GbnfRules& rules, const std::vector<std::string>& texts,
                            std::string_view hint) {
  Node root;
  for (const std::string& text : texts) {
    Node* node = &root;
    for (uint32_t c : Utf8Decode(text)) {
      auto& child = node->children[c];
      if (!child) child = std::make_unique<Node>();
      node = child.get();
    }
    node->terminal = true;
  }
  std::string expr = Write(rules, root, hint);
  // Tear the trie down iteratively: a long value is a long chain of nodes, too deep for
  // recursive destructors.
  std::vector<std::unique_ptr<Node>> doomed;
  for (auto& [c, child] : root.children) doomed.push_back(std::move(child));
  while (!doomed.empty()) {
    std::unique_ptr<Node> node = std::move(doomed.back());
    doomed.pop_back();
    for (auto& [c, child] : node->children) doomed.push_back(std::move(child));
  }
  if (expr.empty()) return "\"\"";
  return GbnfGroup(expr);
}

}  // namespace infera::guided
