// Placeholder until the compilers land (issue 27): every constraint is refused, never
// ignored.
#include "guided/guided_grammar.h"

namespace infera::guided {

absl::StatusOr<std::string> JsonSchemaToGbnf(std::string_view, bool) {
  return absl::UnimplementedError("json_schema is not supported yet");
}
std::string JsonObjectGbnf() { return "root ::= \"{\" [^\\x00]* \"}\"\n"; }
absl::StatusOr<std::string> RegexToGbnf(std::string_view) {
  return absl::UnimplementedError("guided_regex is not supported yet");
}
absl::StatusOr<std::string> ChoiceToGbnf(const std::vector<std::string>&) {
  return absl::UnimplementedError("guided_choice is not supported yet");
}

}  // namespace infera::guided
