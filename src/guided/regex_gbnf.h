// A parsed regex (regex_parser.h) written as one GBNF expression, either over the text
// itself (guided_regex) or over the inside of a JSON string literal (a schema's
// `pattern`: every character as JSON writes it, `"` as \" and control characters
// escaped).
//
// Thread-safe (pure functions).
#ifndef INFERA_GUIDED_REGEX_GBNF_H_
#define INFERA_GUIDED_REGEX_GBNF_H_

#include <string>

#include "guided/code_point_set.h"
#include "guided/regex_parser.h"

namespace infera::guided {

enum class RegexTarget { kText, kJsonStringContent };

std::string RegexNodeToGbnf(const RegexNode& node, RegexTarget target);

// One character of `set` in the target's notation: a class, or for JSON string content
// a class of the characters written as themselves plus the escapes of the others.
std::string CharSetToGbnf(const CodePointSet& set, RegexTarget target);

}  // namespace infera::guided

#endif  // INFERA_GUIDED_REGEX_GBNF_H_
