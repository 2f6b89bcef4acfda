// ChatTemplate: renders chat messages into a prompt for the common template families,
// detected from tokenizer_config.json's Jinja `chat_template` by its marker tokens —
// no Jinja engine:
//
//   Llama-3   "<|start_header_id|>"   <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>…
//   ChatML    "<|im_start|>"          <|im_start|>user\nHi<|im_end|>\n…  (Qwen: its default system
//                                     message, read from the template, when none is given)
//   Llama-2   "[INST]" and "<<SYS>>"  <s>[INST] <<SYS>>\nsys\n<</SYS>>\n\nHi [/INST] answer </s>…
//   Mistral   "[INST]"                <s>[INST] Hi [/INST]answer</s>[INST] …  (a system message is
//                                     put before the first user message)
// Any other template is an error naming the families; so is a model without one.
//
// Tools (OpenAI's `tools`, tool results and assistant tool calls) are rendered per family
// as the families' own templates do (docs/structured_output.md "OpenAI surface"):
//   ChatML    Hermes/Qwen: a "# Tools" block with <tools>…</tools> in the system message;
//             assistant calls as <tool_call>\n{"name", "arguments"}\n</tool_call>; tool
//             results as <tool_response>…</tool_response> in a user turn
//   Llama-3   Llama-3.1 JSON: the functions and the answer format before the first user
//             message; calls as {"name", "parameters"}; results in an `ipython` turn
//   Mistral   [AVAILABLE_TOOLS][…][/AVAILABLE_TOOLS] before the last user message; calls
//             as [TOOL_CALLS][{"name", "arguments", "id"}]; results as [TOOL_RESULTS]
//   Llama-2   no tool format: tools, tool messages and tool calls are refused
//
// Thread-safe (a value type).
#ifndef INFERA_LLM_CHAT_TEMPLATE_H_
#define INFERA_LLM_CHAT_TEMPLATE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/chat_message.h"

namespace infera::llm {

class ChatTemplate {
 public:
  enum class Kind { kLlama3, kChatMl, kLlama2, kMistral };

  // FailedPrecondition when `jinja` is empty, InvalidArgument when it is no known family.
  static absl::StatusOr<ChatTemplate> Detect(std::string_view jinja, std::string bos_token,
                                             std::string eos_token);

  // InvalidArgument for an unknown role, an empty conversation, or tools in a family
  // without a tool format. A tool's parameters_json and a call's arguments must be JSON
  // text (the OpenAI request parser checks them); they are rendered as they are.
  absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                     const std::vector<ChatTool>& tools = {}) const;
  // At most the bytes of Render(messages, ...) whenever it succeeds, without rendering:
  // the contents of the messages other than system ones, less the surrounding
  // whitespace some families trim (every family renders each of them). With the
  // tokenizer's bytes-per-token bound it gives a chat prompt's least length before it
  // is rendered (prompt_length.h). O(messages + trimmed whitespace).
  static size_t MinRenderedBytes(const std::vector<ChatMessage>& messages);
  Kind kind() const { return kind_; }
  ToolCallFormat tool_call_format() const;
  std::string_view name() const;

 private:
  Kind kind_ = Kind::kChatMl;
  absl::StatusOr<std::string> RenderChatMl(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                           const std::vector<ChatTool>& tools) const;
  absl::StatusOr<std::string> RenderLlama3(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                           const std::vector<ChatTool>& tools) const;
  absl::StatusOr<std::string> RenderInst(const std::vector<ChatMessage>& messages,
                                         const std::vector<ChatTool>& tools) const;

  std::string bos_, eos_, default_system_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_CHAT_TEMPLATE_H_
