// Guided decoding's front half: what a request asks its output to be (a JSON schema, any
// JSON object, a regular expression, one of a list of strings) compiled to GBNF text —
// the grammar notation the LLM engine compiles and enforces token by token
// (src/grammar/, docs/structured_output.md). Pure text → text: no vocabulary, no engine.
//
// Every function bounds its work (nesting depth, enum sizes, repetition counts, output
// size at most kMaxGrammarBytes) and refuses what it does not support with
// InvalidArgument naming the keyword or construct — never a grammar that silently
// accepts more or less than asked.
//
// Thread-safe (pure functions).
#ifndef INFERA_GUIDED_GUIDED_GRAMMAR_H_
#define INFERA_GUIDED_GUIDED_GRAMMAR_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::guided {

// A JSON schema (JSON text) → a GBNF grammar whose `root` accepts exactly the JSON
// documents valid against it (docs/structured_output.md lists the keywords). `strict`:
// OpenAI's json_schema.strict (objects take no properties beyond `properties`).
absl::StatusOr<std::string> JsonSchemaToGbnf(std::string_view schema_json, bool strict = false);

// response_format {"type": "json_object"}: any JSON object.
std::string JsonObjectGbnf();

// A regular expression (the subset docs/structured_output.md lists; the whole output
// must match, as vLLM's guided_regex) → GBNF.
absl::StatusOr<std::string> RegexToGbnf(std::string_view regex);

// guided_choice: exactly one of the strings.
absl::StatusOr<std::string> ChoiceToGbnf(const std::vector<std::string>& choices);

}  // namespace infera::guided

#endif  // INFERA_GUIDED_GUIDED_GRAMMAR_H_
