// ChatMessage: one message of a chat conversation, as the OpenAI chat API and a model's
// chat template see it; ChatTool: a function the model may call (OpenAI's `tools`);
// ToolCallFormat: how a chat-template family writes tool calls. Part of the
// transport-neutral generation request (api/generation.h); docs/structured_output.md
// "OpenAI surface".
//
// Value types; thread-safe to copy.
#ifndef INFERA_API_CHAT_MESSAGE_H_
#define INFERA_API_CHAT_MESSAGE_H_

#include <string>
#include <vector>

namespace infera {

// One function call of an assistant message (OpenAI's tool_calls[]).
struct ChatToolCall {
  std::string id;         // "call_…"
  std::string name;       // the function's name
  std::string arguments;  // JSON text (OpenAI sends it as a string)
};

struct ChatMessage {
  std::string role;  // system, user, assistant, tool
  std::string content;
  std::vector<ChatToolCall> tool_calls;  // assistant: the calls it made (content may be empty)
  std::string tool_call_id;              // tool: the call this message answers
};

// A function the model may call: what the chat template renders into the prompt.
struct ChatTool {
  std::string name;
  std::string description;      // may be empty
  std::string parameters_json;  // a JSON schema (compact JSON text); "{}" when not given
};

// How a model's chat-template family writes tool calls (chat_template.h renders tools
// this way; src/openai/tool_call_parser.h reads them back):
//   kHermes   <tool_call>{"name": …, "arguments": {…}}</tool_call>   (ChatML: Hermes, Qwen)
//   kLlama3   {"name": …, "parameters": {…}}                          (Llama-3.1 JSON)
//   kMistral  [TOOL_CALLS][{"name": …, "arguments": {…}}, …]          (Mistral)
//   kNone     the family has no tool-call format (Llama-2)
enum class ToolCallFormat { kNone, kHermes, kLlama3, kMistral };

}  // namespace infera

#endif  // INFERA_API_CHAT_MESSAGE_H_
