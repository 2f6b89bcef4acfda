// Object keys other than the declared property names, for additionalProperties: an
// extra key equal to a declared one would be a duplicate key whose value escaped the
// property's schema (JSON parsers keep the last). Written as a trie of the names, each
// node's rule offering the characters that leave the trie; extra keys use no escape
// sequences (a subset: "\u0061" could otherwise spell "a").
//
// Thread-compatible (operates on the caller's GbnfRules).
#ifndef INFERA_GUIDED_JSON_KEY_EXCLUSION_H_
#define INFERA_GUIDED_JSON_KEY_EXCLUSION_H_

#include <string>
#include <vector>

#include "guided/gbnf_text.h"

namespace infera::guided {

// A rule for a JSON string literal (quotes included) whose text is none of `names`.
std::string JsonKeyOtherThan(GbnfRules& rules, const std::vector<std::string>& names);

}  // namespace infera::guided

#endif  // INFERA_GUIDED_JSON_KEY_EXCLUSION_H_
