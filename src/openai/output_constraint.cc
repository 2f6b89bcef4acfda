#include "openai/output_constraint.h"

#include <string>
#include <vector>

#include "common/status.h"
#include "common/str_cat.h"
#include "guided/guided_grammar.h"
#include "openai/json_text.h"
#include "text/json_util.h"

namespace infera::openai {
namespace {

using text::AsView;
using text::FindMember;

// The most strings guided_choice takes (the compiled grammar is bounded by
// kMaxGrammarBytes too).
constexpr size_t kMaxChoiceStrings = 4096;

absl::Status Field(std::string_view name, std::string_view rule) {
  return absl::InvalidArgumentError(StrCat("'", name, "' ", rule));
}

// One constraint: its kind and its grammar (or the compiler's refusal).
struct Constraint {
  std::string field;  // the request field it came from, for errors
  std::string kind;
  absl::StatusOr<std::string> grammar;
};

// A JSON schema given as an object (or, for guided_json, as JSON text).
absl::StatusOr<std::string> SchemaText(const rapidjson::Value& v, std::string_view field, bool text_allowed) {
  if (v.IsObject()) return JsonText(v);
  if (text_allowed && v.IsString()) {
    rapidjson::Document doc;
    RETURN_IF_ERROR(text::ParseJson(AsView(v), field, doc));
    if (!doc.IsObject()) return Field(field, "must be a JSON schema (an object)");
    return JsonText(doc);
  }
  return Field(field, text_allowed ? "must be a JSON schema: an object or its JSON text" : "must be a JSON schema (an object)");
}

absl::StatusOr<std::optional<Constraint>> ResponseFormat(const rapidjson::Value& rf) {
  if (!rf.IsObject()) return Field("response_format", "must be an object with a 'type'");
  const rapidjson::Value* type = FindMember(rf, "type");
  if (!type || !type->IsString()) return Field("response_format.type", "is required: text, json_object or json_schema");
  const std::string_view t = AsView(*type);
  if (t == "text") return std::optional<Constraint>();
  if (t == "json_object") return std::optional<Constraint>(Constraint{"response_format", "json_object", guided::JsonObjectGbnf()});
  if (t != "json_schema") {
    return Field("response_format.type", StrCat("'", t, "' is not supported (text, json_object, json_schema)"));
  }
  const rapidjson::Value* js = FindMember(rf, "json_schema");
  if (!js || !js->IsObject()) {
    return Field("response_format.json_schema", "is required with type json_schema: {\"name\", \"schema\", \"strict\"}");
  }
  if (const rapidjson::Value* name = FindMember(*js, "name"); name && !name->IsString()) {
    return Field("response_format.json_schema.name", "must be a string");
  }
  bool strict = false;
  if (const rapidjson::Value* s = FindMember(*js, "strict")) {
    if (!s->IsBool()) return Field("response_format.json_schema.strict", "must be a boolean");
    strict = s->GetBool();
  }
  const rapidjson::Value* schema = FindMember(*js, "schema");
  // OpenAI's schema is optional; without one any JSON object is what vLLM accepts.
  if (!schema) return std::optional<Constraint>(Constraint{"response_format", "json_object", guided::JsonObjectGbnf()});
  ASSIGN_OR_RETURN(std::string text, SchemaText(*schema, "response_format.json_schema.schema", false));
  return std::optional<Constraint>(
      Constraint{"response_format.json_schema.schema", "json_schema", guided::JsonSchemaToGbnf(text, strict)});
}

absl::StatusOr<Constraint> GuidedChoice(const rapidjson::Value& v) {
  if (!v.IsArray() || v.Empty()) return Field("guided_choice", "must be a non-empty list of strings");
  if (v.Size() > kMaxChoiceStrings) return Field("guided_choice", StrCat("takes at most ", kMaxChoiceStrings, " strings"));
  std::vector<std::string> choices;
  for (const auto& c : v.GetArray()) {
    if (!c.IsString()) return Field("guided_choice", "must be a non-empty list of strings");
    choices.emplace_back(AsView(c));
  }
  return Constraint{"guided_choice", "choice", guided::ChoiceToGbnf(choices)};
}

}  // namespace

absl::Status ConstraintError(const absl::Status& status, std::string_view field) {
  return absl::InvalidArgumentError(StrCat("'", field, "': ", status.message()));
}

absl::Status ParseOutputConstraint(const rapidjson::Value& doc, SamplingParams& sampling) {
  std::vector<Constraint> constraints;
  if (const rapidjson::Value* rf = FindMember(doc, "response_format")) {
    ASSIGN_OR_RETURN(std::optional<Constraint> c, ResponseFormat(*rf));
    if (c) constraints.push_back(std::move(*c));
  }
  if (const rapidjson::Value* v = FindMember(doc, "guided_json")) {
    ASSIGN_OR_RETURN(std::string schema, SchemaText(*v, "guided_json", true));
    constraints.push_back({"guided_json", "json_schema", guided::JsonSchemaToGbnf(schema)});
  }
  if (const rapidjson::Value* v = FindMember(doc, "guided_regex")) {
    if (!v->IsString()) return Field("guided_regex", "must be a string (a regular expression)");
    constraints.push_back({"guided_regex", "regex", guided::RegexToGbnf(AsView(*v))});
  }
  if (const rapidjson::Value* v = FindMember(doc, "guided_choice")) {
    ASSIGN_OR_RETURN(Constraint c, GuidedChoice(*v));
    constraints.push_back(std::move(c));
  }
  if (const rapidjson::Value* v = FindMember(doc, "guided_grammar")) {
    if (!v->IsString() || v->GetStringLength() == 0) return Field("guided_grammar", "must be a non-empty string (GBNF)");
    constraints.push_back({"guided_grammar", "grammar", std::string(AsView(*v))});
  }
  if (const rapidjson::Value* v = FindMember(doc, "guided_decoding_backend"); v && !v->IsString()) {
    return Field("guided_decoding_backend", "must be a string");
  }
  if (FindMember(doc, "guided_whitespace_pattern")) {
    return Field("guided_whitespace_pattern", "is not supported: the JSON grammar's whitespace is fixed");
  }
  if (constraints.empty()) return absl::OkStatus();
  if (constraints.size() > 1) {
    return Field(constraints[1].field, StrCat("cannot be combined with '", constraints[0].field,
                                              "': a request takes at most one output constraint"));
  }
  Constraint& c = constraints[0];
  if (!c.grammar.ok()) return ConstraintError(c.grammar.status(), c.field);
  if (c.grammar->size() > kMaxGrammarBytes) {
    return Field(c.field, StrCat("compiles to a grammar of ", c.grammar->size(), " bytes, more than the limit of ",
                                 kMaxGrammarBytes));
  }
  sampling.grammar = std::move(*c.grammar);
  sampling.constraint_kind = c.kind;
  return absl::OkStatus();
}

}  // namespace infera::openai
