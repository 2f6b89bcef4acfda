// The structured-output fields of an OpenAI request (completions and chat) compiled into
// the generation's grammar (docs/structured_output.md "OpenAI surface"):
//
//   response_format  {"type": "text"}                  no constraint
//                    {"type": "json_object"}           any JSON object
//                    {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}
//   guided_json      a JSON schema, as an object or as JSON text (vLLM)
//   guided_regex     a regular expression the whole output matches (vLLM)
//   guided_choice    a non-empty list of strings: the output is one of them (vLLM)
//   guided_grammar   GBNF text, passed through to the engine (vLLM's EBNF is llama.cpp's
//                    GBNF for the grammars agent frameworks send; the engine refuses what
//                    it cannot parse)
//   guided_decoding_backend   accepted (a string) and not used: infera has one engine
//   guided_whitespace_pattern refused: the compilers' whitespace is fixed
//
// At most one constraint per request (response_format text is none). The compilers
// (guided/guided_grammar.h) refuse unsupported schema keywords and regex constructs; any
// refusal reaches the client as InvalidArgument (400) naming the field and the reason.
// The grammar goes to SamplingParams::grammar with its constraint_kind (json_object,
// json_schema, regex, choice, grammar).
//
// Thread-safe (pure functions).
#ifndef INFERA_OPENAI_OUTPUT_CONSTRAINT_H_
#define INFERA_OPENAI_OUTPUT_CONSTRAINT_H_

#include "absl/status/status.h"
#include "api/sampling_params.h"
#include "rapidjson/document.h"

namespace infera::openai {

// Reads the fields above from the request object `doc` into `sampling` (grammar and
// constraint_kind; unchanged when the request has no constraint).
absl::Status ParseOutputConstraint(const rapidjson::Value& doc, SamplingParams& sampling);

// `status` from a guided compiler as the client's error: InvalidArgument naming `field`
// (Unimplemented — a compiler not available yet — included).
absl::Status ConstraintError(const absl::Status& status, std::string_view field);

}  // namespace infera::openai

#endif  // INFERA_OPENAI_OUTPUT_CONSTRAINT_H_
