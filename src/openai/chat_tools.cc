#include "openai/chat_tools.h"

#include <algorithm>

#include "common/status.h"
#include "common/str_cat.h"
#include "guided/guided_grammar.h"
#include "openai/json_text.h"
#include "openai/output_constraint.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "common/json_writer.h"
#include "text/json_util.h"

namespace infera::openai {
namespace {

using text::AsView;
using text::FindMember;

absl::Status Field(std::string_view name, std::string_view rule) {
  return absl::InvalidArgumentError(StrCat("'", name, "' ", rule));
}

std::string JsonString(std::string_view s) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  WriteString(w, s);
  return std::string(b.GetString(), b.GetSize());
}

absl::StatusOr<ChatTool> ParseTool(const rapidjson::Value& v, size_t i, bool& strict) {
  const std::string at = StrCat("tools[", i, "]");
  if (!v.IsObject()) return Field(at, "must be an object {\"type\": \"function\", \"function\": {…}}");
  const rapidjson::Value* type = FindMember(v, "type");
  if (!type || !type->IsString() || AsView(*type) != "function") {
    return Field(StrCat(at, ".type"), "must be \"function\" (the only tool type)");
  }
  const rapidjson::Value* f = FindMember(v, "function");
  if (!f || !f->IsObject()) return Field(StrCat(at, ".function"), "is required (an object with a name)");
  ChatTool tool;
  const rapidjson::Value* name = FindMember(*f, "name");
  if (!name || !name->IsString() || !IsValidToolName(AsView(*name))) {
    return Field(StrCat(at, ".function.name"), "must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -");
  }
  tool.name = AsView(*name);
  if (const rapidjson::Value* d = FindMember(*f, "description")) {
    if (!d->IsString()) return Field(StrCat(at, ".function.description"), "must be a string");
    tool.description = AsView(*d);
  }
  tool.parameters_json = "{\"type\":\"object\"}";
  if (const rapidjson::Value* p = FindMember(*f, "parameters")) {
    if (!p->IsObject()) return Field(StrCat(at, ".function.parameters"), "must be a JSON schema (an object)");
    if (!p->ObjectEmpty()) tool.parameters_json = JsonText(*p);
  }
  strict = false;
  if (const rapidjson::Value* s = FindMember(*f, "strict")) {
    if (!s->IsBool()) return Field(StrCat(at, ".function.strict"), "must be a boolean");
    strict = s->GetBool();
  }
  return tool;
}

absl::StatusOr<ToolChoice> ParseToolChoice(const rapidjson::Value& v, const std::vector<ChatTool>& tools) {
  ToolChoice choice;
  if (v.IsString()) {
    const std::string_view s = AsView(v);
    if (s == "none") choice.mode = ToolChoiceMode::kNone;
    else if (s == "auto") choice.mode = ToolChoiceMode::kAuto;
    else if (s == "required") choice.mode = ToolChoiceMode::kRequired;
    else return Field("tool_choice", StrCat("'", s, "' is not one of none, auto, required or {\"type\": \"function\", …}"));
  } else if (v.IsObject()) {
    const rapidjson::Value* type = FindMember(v, "type");
    const rapidjson::Value* f = FindMember(v, "function");
    const rapidjson::Value* name = f ? FindMember(*f, "name") : nullptr;
    if (!type || !type->IsString() || AsView(*type) != "function" || !name || !name->IsString()) {
      return Field("tool_choice", "must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": …}}");
    }
    choice.mode = ToolChoiceMode::kNamed;
    choice.name = AsView(*name);
    const bool known = std::any_of(tools.begin(), tools.end(), [&](const ChatTool& t) { return t.name == choice.name; });
    if (!known) return Field("tool_choice.function.name", StrCat("'", choice.name.substr(0, 64), "' is not one of the tools"));
  } else {
    return Field("tool_choice", "must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": …}}");
  }
  if (choice.mode != ToolChoiceMode::kNone && tools.empty()) {
    return Field("tool_choice", "needs 'tools' (a non-empty list) unless it is none");
  }
  return choice;
}

}  // namespace

bool IsValidToolName(std::string_view name) {
  if (name.empty() || name.size() > kMaxToolNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

absl::StatusOr<ChatTools> ParseChatTools(const rapidjson::Value& doc) {
  ChatTools r;
  if (FindMember(doc, "functions") || FindMember(doc, "function_call")) {
    return Field(FindMember(doc, "functions") ? "functions" : "function_call",
                 "is OpenAI's deprecated form and is not supported; use 'tools' and 'tool_choice'");
  }
  if (const rapidjson::Value* tools = FindMember(doc, "tools")) {
    if (!tools->IsArray()) return Field("tools", "must be a list of {\"type\": \"function\", \"function\": {…}}");
    if (tools->Size() > kMaxTools) return Field("tools", StrCat("takes at most ", kMaxTools, " tools"));
    size_t i = 0;
    for (const auto& v : tools->GetArray()) {
      bool strict = false;
      ASSIGN_OR_RETURN(ChatTool tool, ParseTool(v, i, strict));
      for (const ChatTool& other : r.tools) {
        if (other.name == tool.name) return Field(StrCat("tools[", i, "].function.name"), StrCat("'", tool.name, "' is given twice"));
      }
      r.tools.push_back(std::move(tool));
      r.strict.push_back(strict);
      ++i;
    }
  }
  r.choice.mode = r.tools.empty() ? ToolChoiceMode::kNone : ToolChoiceMode::kAuto;
  if (const rapidjson::Value* tc = FindMember(doc, "tool_choice")) {
    ASSIGN_OR_RETURN(r.choice, ParseToolChoice(*tc, r.tools));
  }
  if (const rapidjson::Value* p = FindMember(doc, "parallel_tool_calls")) {
    if (!p->IsBool()) return Field("parallel_tool_calls", "must be a boolean");
    r.parallel_tool_calls = p->GetBool();
  }
  return r;
}

std::string ToolChoiceSchema(const ChatTools& t) {
  if (t.choice.mode == ToolChoiceMode::kNamed) {
    for (const ChatTool& tool : t.tools) {
      if (tool.name == t.choice.name) return tool.parameters_json;
    }
    return "";
  }
  if (t.choice.mode != ToolChoiceMode::kRequired) return "";
  // vLLM's: [{"name": <one of the tools>, "parameters": <its schema>}, …], at least one;
  // a call object has those two members only (vLLM's leaves it open, which lets a model
  // write junk members that the parser then drops).
  std::string any_of;
  for (const ChatTool& tool : t.tools) {
    StrAppend(&any_of, any_of.empty() ? "" : ",",
              "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"enum\":[", JsonString(tool.name),
              "]},\"parameters\":", tool.parameters_json,
              "},\"required\":[\"name\",\"parameters\"],\"additionalProperties\":false}");
  }
  return StrCat("{\"type\":\"array\",\"minItems\":1,", t.parallel_tool_calls ? "" : "\"maxItems\":1,",
                "\"items\":{\"anyOf\":[", any_of, "]}}");
}

absl::Status ApplyToolChoice(const ChatTools& t, SamplingParams& sampling) {
  const std::string schema = ToolChoiceSchema(t);
  if (schema.empty()) return absl::OkStatus();
  // Named: the function's own strict; required: strict when every tool is.
  bool strict = true;
  std::string field = "tools";  // required: the combined schema of every tool
  for (size_t i = 0; i < t.tools.size(); ++i) {
    if (t.choice.mode == ToolChoiceMode::kRequired) {
      strict = strict && t.strict[i];
    } else if (t.tools[i].name == t.choice.name) {
      strict = t.strict[i];
      field = StrCat("tools[", i, "].function.parameters");
    }
  }
  absl::StatusOr<std::string> grammar = guided::JsonSchemaToGbnf(schema, strict);
  if (!grammar.ok()) return ConstraintError(grammar.status(), field);
  if (grammar->size() > kMaxGrammarBytes) {
    return Field(field, StrCat("compile(s) to a grammar of ", grammar->size(), " bytes, more than the limit of ",
                               kMaxGrammarBytes));
  }
  sampling.grammar = std::move(*grammar);
  sampling.constraint_kind = "tools";
  return absl::OkStatus();
}

}  // namespace infera::openai
