// ChatTemplate: renders chat messages into a prompt with the model's own Jinja
// `chat_template` (tokenizer_config.json, or a GGUF's tokenizer.chat_template) through
// infera's Jinja engine (src/jinja, docs/jinja.md), as Hugging Face's
// apply_chat_template does: the variables messages, tools (none when not given),
// documents (none), add_generation_prompt, bos_token and eos_token (when the tokenizer
// has them). A list-of-named-templates config picks "tool_use" when the request has
// tools and the list has one, else "default" (as Hugging Face does).
//
// Messages reach the template in OpenAI's shape: {"role", "content"} (content none for
// an assistant message that only calls tools), "tool_calls": [{"id", "type": "function",
// "function": {"name", "arguments"}}] with the arguments as a JSON object (as vLLM passes
// them; text that is no JSON stays a string), and a tool message's "tool_call_id".
// Tools: [{"type": "function", "function": {"name", "description", "parameters"}}].
//
// The family, read from the template's marker tokens, only says how the model writes
// tool calls (tool_call_format, for src/openai/tool_call_parser.h):
//   Llama-3   "<|start_header_id|>"                  kLlama3   {"name", "parameters"}
//   ChatML    "<|im_start|>" or "<tool_call>"         kHermes   <tool_call>{…}</tool_call>
//   Mistral   "[TOOL_CALLS]", or "[INST]" w/o <<SYS>>  kMistral  [TOOL_CALLS][{…}]
//   Llama-2   "[INST]" and "<<SYS>>"                   kNone
//   other     (Phi, Gemma, DeepSeek, …)                kNone
// Tools, tool messages and tool calls are refused for a kNone family (their answers could
// not be read back), and tools for a template that never mentions `tools` (the model
// would not see them).
//
// Thread-safe: Render is const and shares only the immutable parsed template.
#ifndef INFERA_LLM_CHAT_TEMPLATE_H_
#define INFERA_LLM_CHAT_TEMPLATE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/chat_message.h"
#include "jinja/template.h"

namespace infera::llm {

class ChatTemplate {
 public:
  enum class Kind { kLlama3, kChatMl, kLlama2, kMistral, kOther };

  // FailedPrecondition when `jinja` is empty; InvalidArgument naming the line and the
  // construct when it (or `tool_use_jinja`, the named "tool_use" template, when given)
  // cannot be parsed.
  static absl::StatusOr<ChatTemplate> Detect(std::string_view jinja, std::string bos_token, std::string eos_token,
                                             std::string_view tool_use_jinja = {});

  // InvalidArgument for an unknown role, an empty conversation, tools the template cannot
  // take (above), or a render error (the template's raise_exception message, with its
  // line). A tool's parameters_json and a call's arguments are JSON text (the OpenAI
  // request parser checks them).
  absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                     const std::vector<ChatTool>& tools = {}) const;
  // The bytes of the messages other than system ones, less surrounding whitespace: what
  // the prompt-length pre-check (prompt_length.h) assumes a rendered prompt holds at
  // least. True of every family template infera tests; a template that drops message
  // text (Qwen3 drops earlier turns' reasoning) can render less, and then a conversation
  // near the length limit is refused before it is rendered. O(messages).
  static size_t MinRenderedBytes(const std::vector<ChatMessage>& messages);
  Kind kind() const { return kind_; }
  ToolCallFormat tool_call_format() const;
  std::string_view name() const;

 private:
  Kind kind_ = Kind::kOther;
  jinja::Template default_;
  std::optional<jinja::Template> tool_use_;
  bool renders_tools_ = false;  // the template used with tools mentions `tools`
  std::string bos_, eos_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_CHAT_TEMPLATE_H_
