// The JSON rules every JSON grammar shares — whitespace, strings, numbers, any value —
// added to a grammar once, on first use (GbnfRules' memo), under their own names.
//
// Whitespace: between JSON tokens at most one of "" / " " / "\n" followed by up to 20
// spaces or tabs (enough to indent pretty-printed output). Bounded on purpose: a model
// left free to write whitespace (a random one above all) can fill max_tokens with it.
// No whitespace before the first or after the last token.
//
// Thread-compatible (operates on the caller's GbnfRules).
#ifndef INFERA_GUIDED_JSON_GBNF_RULES_H_
#define INFERA_GUIDED_JSON_GBNF_RULES_H_

#include <string>

#include "guided/gbnf_text.h"

namespace infera::guided {

inline constexpr int kMaxIndent = 20;

// Each returns the name of the rule in `rules`, adding it (and what it uses) when absent.
std::string JsonWs(GbnfRules& rules);
std::string JsonStringChar(GbnfRules& rules);  // one character inside a string literal
std::string JsonString(GbnfRules& rules);
std::string JsonNumber(GbnfRules& rules);
std::string JsonInteger(GbnfRules& rules);
std::string JsonBoolean(GbnfRules& rules);
std::string JsonNull(GbnfRules& rules);
std::string JsonValue(GbnfRules& rules);   // any JSON value
std::string JsonObject(GbnfRules& rules);  // any JSON object
std::string JsonArray(GbnfRules& rules);   // any JSON array

}  // namespace infera::guided

#endif  // INFERA_GUIDED_JSON_GBNF_RULES_H_
