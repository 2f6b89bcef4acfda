// Fuzz target: the JSON schema → GBNF compiler (guided/guided_grammar.h JsonSchemaToGbnf).
//
// Input: one byte of flags (bit 0: OpenAI's strict) then the schema's JSON text. Oracle
// besides ASan/UBSan (and libFuzzer's time and memory limits, which stand for the
// bounds of guided_limits.h): a refusal is InvalidArgument with a message; a grammar
// starts with the `root` rule and is at most kMaxGrammarBytes.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/sampling_params.h"
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
  return 0;
}
