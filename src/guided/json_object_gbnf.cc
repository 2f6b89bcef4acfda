// response_format {"type": "json_object"} → GBNF: any JSON object (json_gbnf_rules.h's
// bounded whitespace).
#include "guided/gbnf_text.h"
#include "guided/guided_grammar.h"
#include "guided/json_gbnf_rules.h"

namespace infera::guided {

std::string JsonObjectGbnf() {
  GbnfRules rules;
  rules.Define("root", JsonObject(rules));
  return rules.Text();
}

}  // namespace infera::guided
