#include "llm/chat_template.h"

#include "common/status.h"
#include "common/str_cat.h"
#include "jinja/builtins.h"

namespace infera::llm {
namespace {

using jinja::Value;
using jinja::ValueDict;
using jinja::ValueList;

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

bool Contains(std::string_view s, std::string_view marker) { return s.find(marker) != std::string_view::npos; }

// JSON text as a value; text that is no JSON stays a string (as OpenAI clients may send).
Value JsonOrString(const std::string& text, Value fallback) {
  if (text.empty()) return fallback;
  try {
    return jinja::FromJson(text);
  } catch (const jinja::Error&) {
    return Value::String(text);
  }
}

Value MessageValue(const ChatMessage& m) {
  Value v = Value::Dict();
  v.Set("role", Value::String(m.role));
  const bool calls_only = m.role == "assistant" && !m.tool_calls.empty() && m.content.empty();
  v.Set("content", calls_only ? Value::None() : Value::String(m.content));
  if (!m.tool_calls.empty()) {
    ValueList calls;
    for (const ChatToolCall& c : m.tool_calls) {
      Value function = Value::Dict({{"name", Value::String(c.name)},
                                    {"arguments", JsonOrString(c.arguments, Value::Dict())}});
      calls.push_back(Value::Dict({{"id", Value::String(c.id)}, {"type", Value::String("function")},
                                   {"function", function}}));
    }
    v.Set("tool_calls", Value::List(std::move(calls)));
  }
  if (!m.tool_call_id.empty()) v.Set("tool_call_id", Value::String(m.tool_call_id));
  return v;
}

Value ToolValue(const ChatTool& t) {
  Value function = Value::Dict({{"name", Value::String(t.name)}});
  if (!t.description.empty()) function.Set("description", Value::String(t.description));
  function.Set("parameters", JsonOrString(t.parameters_json, Value::Dict()));
  return Value::Dict({{"type", Value::String("function")}, {"function", function}});
}

absl::StatusOr<jinja::Template> ParseTemplate(std::string_view source, std::string_view what) {
  auto parsed = jinja::Template::Parse(source);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(StrCat("this model's ", what, " cannot be used: ", parsed.status().message()));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<ChatTemplate> ChatTemplate::Detect(std::string_view jinja, std::string bos, std::string eos,
                                                  std::string_view tool_use_jinja) {
  if (jinja.empty()) {
    return absl::FailedPreconditionError(
        "this model has no chat_template in tokenizer_config.json; use /v1/completions");
  }
  ChatTemplate t;
  ASSIGN_OR_RETURN(t.default_, ParseTemplate(jinja, "chat_template"));
  if (!tool_use_jinja.empty()) {
    ASSIGN_OR_RETURN(t.tool_use_, ParseTemplate(tool_use_jinja, "chat_template \"tool_use\""));
  }
  t.bos_ = std::move(bos);
  t.eos_ = std::move(eos);
  const std::string_view with_tools = tool_use_jinja.empty() ? jinja : tool_use_jinja;
  t.renders_tools_ = (t.tool_use_ ? *t.tool_use_ : t.default_).References("tools");
  if (Contains(with_tools, "<|start_header_id|>")) {
    t.kind_ = Kind::kLlama3;
  } else if (Contains(with_tools, "<|im_start|>") || Contains(with_tools, "<tool_call>")) {
    t.kind_ = Kind::kChatMl;
  } else if (Contains(with_tools, "[TOOL_CALLS]")) {
    t.kind_ = Kind::kMistral;
  } else if (Contains(with_tools, "[INST]")) {
    t.kind_ = Contains(with_tools, "<<SYS>>") ? Kind::kLlama2 : Kind::kMistral;
  } else {
    t.kind_ = Kind::kOther;
  }
  return t;
}

std::string_view ChatTemplate::name() const {
  switch (kind_) {
    case Kind::kLlama3: return "llama-3";
    case Kind::kChatMl: return "chatml";
    case Kind::kLlama2: return "llama-2";
    case Kind::kMistral: return "mistral";
    case Kind::kOther: return "other";
  }
  return "";
}

size_t ChatTemplate::MinRenderedBytes(const std::vector<ChatMessage>& messages) {
  size_t bytes = 0;
  for (const ChatMessage& m : messages) {
    if (m.role != "system") bytes += Trim(m.content).size();
  }
  return bytes;
}

ToolCallFormat ChatTemplate::tool_call_format() const {
  switch (kind_) {
    case Kind::kLlama3: return ToolCallFormat::kLlama3;
    case Kind::kChatMl: return ToolCallFormat::kHermes;
    case Kind::kMistral: return ToolCallFormat::kMistral;
    case Kind::kLlama2:
    case Kind::kOther: return ToolCallFormat::kNone;
  }
  return ToolCallFormat::kNone;
}

absl::StatusOr<std::string> ChatTemplate::Render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                                 const std::vector<ChatTool>& tools) const {
  if (messages.empty()) return absl::InvalidArgumentError("messages must not be empty");
  bool uses_tools = !tools.empty();
  for (const ChatMessage& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool") {
      return absl::InvalidArgumentError(
          StrCat("message role '", m.role, "' is not supported (system, user, assistant, tool)"));
    }
    uses_tools = uses_tools || m.role == "tool" || !m.tool_calls.empty();
  }
  if (uses_tools && tool_call_format() == ToolCallFormat::kNone) {
    return absl::InvalidArgumentError(StrCat("this model's chat template (", name(),
                                             ") has no tool-call format: tools, tool messages and assistant "
                                             "tool_calls are supported for ChatML/Qwen, Llama-3 and Mistral"));
  }
  if (!tools.empty() && !renders_tools_) {
    return absl::InvalidArgumentError(
        "this model's chat template does not render tools (it never mentions `tools`): the model would not see them");
  }
  ValueList message_values;
  message_values.reserve(messages.size());
  for (const ChatMessage& m : messages) message_values.push_back(MessageValue(m));
  Value tool_values = Value::None();
  if (!tools.empty()) {
    ValueList list;
    for (const ChatTool& t : tools) list.push_back(ToolValue(t));
    tool_values = Value::List(std::move(list));
  }
  ValueDict context = {{"messages", Value::List(std::move(message_values))},
                       {"tools", tool_values},
                       {"documents", Value::None()},
                       {"add_generation_prompt", Value::Bool(add_generation_prompt)}};
  if (!bos_.empty()) context.emplace_back("bos_token", Value::String(bos_));
  if (!eos_.empty()) context.emplace_back("eos_token", Value::String(eos_));
  const jinja::Template& tmpl = !tools.empty() && tool_use_ ? *tool_use_ : default_;
  auto rendered = tmpl.Render(context);
  if (!rendered.ok()) return absl::InvalidArgumentError(StrCat("chat template: ", rendered.status().message()));
  return rendered;
}

}  // namespace infera::llm
