// Fuzz target: the JSON schema → GBNF compiler (guided/guided_grammar.h JsonSchemaToGbnf).
//
// Input: one byte of flags (bit 0: OpenAI's strict) then the schema's JSON text. Oracle
// besides ASan/UBSan (and libFuzzer's time and memory limits, which stand for the
// bounds of guided_limits.h): a refusal is InvalidArgument with a message; a grammar
// starts with the `root` rule, is at most kMaxGrammarBytes, and the engine's GBNF
// parser (src/grammar) reads it unless one of its size caps stops it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/sampling_params.h"
#include "grammar/gbnf_parser.h"
#include "guided/guided_grammar.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool strict = (data[0] & 1) != 0;
  std::string_view schema(reinterpret_cast<const char*>(data + 1), size - 1);
  auto grammar = infera::guided::JsonSchemaToGbnf(schema, strict);
  if (!grammar.ok()) {
    if (grammar.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    if (grammar.status().message().empty()) std::abort();
    return 0;
  }
  if (grammar->rfind("root ::= ", 0) != 0) std::abort();
  if (grammar->size() > infera::kMaxGrammarBytes) std::abort();
  // The engine's parser reads every grammar, unless one of its own caps stops it.
  auto parsed = infera::grammar::ParseGbnf(*grammar);
  if (!parsed.ok()) {
    const std::string why(parsed.status().message().data(), parsed.status().message().size());
    if (why.find("more than") == std::string::npos && why.find("too large") == std::string::npos &&
        why.find("deeper than") == std::string::npos) {
      std::abort();
    }
  }
  return 0;
}
