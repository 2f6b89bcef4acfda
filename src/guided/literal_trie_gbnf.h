// A set of exact strings (enum values, guided_choice) as GBNF factored by common prefix:
// "value_1" | "value_2" becomes "value_" [12]-like branches, so while a shared prefix is
// written the engine's matcher keeps one parse stack, not one per string (it caps them,
// grammar::kMaxStacks). Branching points become rules (no deep parenthesis nesting).
//
// Thread-compatible (operates on the caller's GbnfRules).
#ifndef INFERA_GUIDED_LITERAL_TRIE_GBNF_H_
#define INFERA_GUIDED_LITERAL_TRIE_GBNF_H_

#include <string>
#include <string_view>
#include <vector>

#include "guided/gbnf_text.h"

namespace infera::guided {

// An expression (one term) matching exactly the UTF-8 `texts` (at least one; duplicates
// allowed).
std::string LiteralTrieGbnf(GbnfRules& rules, const std::vector<std::string>& texts,
                            std::string_view hint);

}  // namespace infera::guided

#endif  // INFERA_GUIDED_LITERAL_TRIE_GBNF_H_
