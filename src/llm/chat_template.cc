#include "llm/chat_template.h"

#include "common/json_writer.h"
#include "common/str_cat.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::llm {
namespace {

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

// Qwen-style templates hard-code a default system message:
// '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n'
std::string DefaultChatMlSystem(std::string_view jinja) {
  constexpr std::string_view kOpen = "<|im_start|>system\\n";
  const size_t at = jinja.find(kOpen);
  if (at == std::string_view::npos) return "";
  const size_t start = at + kOpen.size();
  const size_t end = jinja.find("<|im_end|>", start);
  if (end == std::string_view::npos) return "";
  std::string_view text = jinja.substr(start, end - start);
  if (text.find("{{") != std::string_view::npos || text.find('\'') != std::string_view::npos) return "";
  return std::string(text);
}

// `text` as a JSON string literal.
std::string JsonString(std::string_view text) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  WriteString(w, text);
  return std::string(b.GetString(), b.GetSize());
}

// A tool as the families' templates show it (`tool | tojson`):
// {"type": "function", "function": {"name", "description", "parameters"}}.
std::string ToolJson(const ChatTool& t) {
  std::string out = StrCat("{\"type\": \"function\", \"function\": {\"name\": ", JsonString(t.name));
  if (!t.description.empty()) StrAppend(&out, ", \"description\": ", JsonString(t.description));
  StrAppend(&out, ", \"parameters\": ", t.parameters_json.empty() ? "{}" : t.parameters_json, "}}");
  return out;
}

}  // namespace

absl::StatusOr<ChatTemplate> ChatTemplate::Detect(std::string_view jinja, std::string bos,
                                                  std::string eos) {
  if (jinja.empty()) {
    return absl::FailedPreconditionError(
        "this model has no chat_template in tokenizer_config.json; use /v1/completions");
  }
  ChatTemplate t;
  t.bos_ = std::move(bos);
  t.eos_ = std::move(eos);
  if (jinja.find("<|start_header_id|>") != std::string_view::npos) {
    t.kind_ = Kind::kLlama3;
  } else if (jinja.find("<|im_start|>") != std::string_view::npos) {
    t.kind_ = Kind::kChatMl;
    t.default_system_ = DefaultChatMlSystem(jinja);
  } else if (jinja.find("[INST]") != std::string_view::npos) {
    t.kind_ = jinja.find("<<SYS>>") != std::string_view::npos ? Kind::kLlama2 : Kind::kMistral;
  } else {
    return absl::InvalidArgumentError(
        "this model's chat_template is not one of the supported families (Llama-2, Llama-3, "
        "ChatML/Qwen, Mistral); use /v1/completions with a formatted prompt");
  }
  return t;
}

std::string_view ChatTemplate::name() const {
  switch (kind_) {
    case Kind::kLlama3: return "llama-3";
    case Kind::kChatMl: return "chatml";
    case Kind::kLlama2: return "llama-2";
    case Kind::kMistral: return "mistral";
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
    case Kind::kLlama2: return ToolCallFormat::kNone;
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
  switch (kind_) {
    case Kind::kLlama3: return RenderLlama3(messages, add_generation_prompt, tools);
    case Kind::kChatMl: return RenderChatMl(messages, add_generation_prompt, tools);
    case Kind::kLlama2:
    case Kind::kMistral: return RenderInst(messages, tools);
  }
  return absl::InternalError("unknown chat template family");
}

absl::StatusOr<std::string> ChatTemplate::RenderChatMl(const std::vector<ChatMessage>& messages,
                                                       bool add_generation_prompt,
                                                       const std::vector<ChatTool>& tools) const {
  std::string out;
  size_t first = 0;
  if (!tools.empty()) {
    // Qwen-2.5's template: the system message (given or default), then the tools.
    out = "<|im_start|>system\n";
    if (messages.front().role == "system") {
      StrAppend(&out, messages.front().content, "\n\n");
      first = 1;
    } else if (!default_system_.empty()) {
      StrAppend(&out, default_system_, "\n\n");
    }
    out += "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
           "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
    for (const ChatTool& t : tools) StrAppend(&out, "\n", ToolJson(t));
    out += "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
           "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
           "<args-json-object>}\n</tool_call><|im_end|>\n";
  } else if (messages.front().role != "system" && !default_system_.empty()) {
    StrAppend(&out, "<|im_start|>system\n", default_system_, "<|im_end|>\n");
  }
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "tool") {
      // Consecutive tool results share one user turn.
      if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
      StrAppend(&out, "\n<tool_response>\n", m.content, "\n</tool_response>");
      if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
      continue;
    }
    if (m.role == "assistant" && !m.tool_calls.empty()) {
      out += "<|im_start|>assistant";
      if (!m.content.empty()) StrAppend(&out, "\n", m.content);
      for (const ChatToolCall& c : m.tool_calls) {
        StrAppend(&out, "\n<tool_call>\n{\"name\": ", JsonString(c.name), ", \"arguments\": ", c.arguments,
                  "}\n</tool_call>");
      }
      out += "<|im_end|>\n";
      continue;
    }
    StrAppend(&out, "<|im_start|>", m.role, "\n", m.content, "<|im_end|>\n");
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

absl::StatusOr<std::string> ChatTemplate::RenderLlama3(const std::vector<ChatMessage>& messages,
                                                       bool add_generation_prompt,
                                                       const std::vector<ChatTool>& tools) const {
  // Llama-3.1's JSON tool calling, tools in the first user message.
  std::string tool_block;
  if (!tools.empty()) {
    tool_block =
        "Given the following functions, please respond with a JSON for a function call with its proper arguments "
        "that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": "
        "dictionary of argument name and its value}.Do not use variables.\n\n";
    for (const ChatTool& t : tools) StrAppend(&tool_block, ToolJson(t), "\n\n");
  }
  std::string out = bos_;
  bool tools_placed = tool_block.empty();
  for (const ChatMessage& m : messages) {
    if (m.role == "tool") {
      StrAppend(&out, "<|start_header_id|>ipython<|end_header_id|>\n\n", Trim(m.content), "<|eot_id|>");
      continue;
    }
    if (!tools_placed && m.role == "user") {
      StrAppend(&out, "<|start_header_id|>user<|end_header_id|>\n\n", tool_block, Trim(m.content), "<|eot_id|>");
      tools_placed = true;
      continue;
    }
    StrAppend(&out, "<|start_header_id|>", m.role, "<|end_header_id|>\n\n", Trim(m.content));
    for (size_t k = 0; k < m.tool_calls.size(); ++k) {
      const ChatToolCall& c = m.tool_calls[k];
      const bool separate = k > 0 || !Trim(m.content).empty();
      StrAppend(&out, separate ? "; " : "", "{\"name\": ", JsonString(c.name), ", \"parameters\": ", c.arguments,
                "}");
    }
    out += "<|eot_id|>";
  }
  if (!tools_placed) {  // no user message: the tools get a user turn of their own
    StrAppend(&out, "<|start_header_id|>user<|end_header_id|>\n\n", Trim(tool_block), "<|eot_id|>");
  }
  if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

absl::StatusOr<std::string> ChatTemplate::RenderInst(const std::vector<ChatMessage>& messages,
                                                     const std::vector<ChatTool>& tools) const {
  std::string out;
  std::string system;
  size_t first = 0;
  if (messages.front().role == "system") system = messages.front().content, first = 1;
  bool first_user = true;
  size_t last_user = messages.size();
  for (size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role == "user") last_user = i;
  }
  if (kind_ == Kind::kMistral) out = bos_;
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "system") return absl::InvalidArgumentError("only the first message may be a system message");
    if (m.role == "user") {
      std::string content = m.content;
      if (first_user && !system.empty()) {
        content = kind_ == Kind::kLlama2 ? StrCat("<<SYS>>\n", system, "\n<</SYS>>\n\n", content)
                                         : StrCat(system, "\n\n", content);
      }
      first_user = false;
      if (kind_ == Kind::kLlama2) {
        StrAppend(&out, bos_, "[INST] ", Trim(content), " [/INST]");
        continue;
      }
      if (i == last_user && !tools.empty()) {
        out += "[AVAILABLE_TOOLS] [";
        for (size_t k = 0; k < tools.size(); ++k) StrAppend(&out, k ? ", " : "", ToolJson(tools[k]));
        out += "][/AVAILABLE_TOOLS]";
      }
      StrAppend(&out, "[INST] ", content, " [/INST]");
    } else if (m.role == "tool") {  // Mistral only (Llama-2 refused above)
      StrAppend(&out, "[TOOL_RESULTS] {\"content\": ", JsonString(m.content), ", \"call_id\": ",
                JsonString(m.tool_call_id), "}[/TOOL_RESULTS]");
    } else if (kind_ == Kind::kLlama2) {
      StrAppend(&out, " ", Trim(m.content), " ", eos_);
    } else {
      out += m.content;
      if (!m.tool_calls.empty()) {
        out += "[TOOL_CALLS] [";
        for (size_t k = 0; k < m.tool_calls.size(); ++k) {
          const ChatToolCall& c = m.tool_calls[k];
          StrAppend(&out, k ? ", " : "", "{\"name\": ", JsonString(c.name), ", \"arguments\": ", c.arguments,
                    ", \"id\": ", JsonString(c.id), "}");
        }
        out += "]";
      }
      out += eos_;
    }
  }
  if (!tools.empty() && last_user == messages.size() && kind_ == Kind::kMistral) {
    out += "[AVAILABLE_TOOLS] [";  // no user message: the tools end the prompt
    for (size_t k = 0; k < tools.size(); ++k) StrAppend(&out, k ? ", " : "", ToolJson(tools[k]));
    out += "][/AVAILABLE_TOOLS]";
  }
  return out;
}

}  // namespace infera::llm
