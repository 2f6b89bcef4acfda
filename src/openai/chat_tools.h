// The tool-calling fields of a chat request (docs/structured_output.md "OpenAI surface"):
//
//   tools                at most kMaxTools of {"type": "function", "function": {"name",
//                        "description", "parameters", "strict"}}; names match
//                        [A-Za-z0-9_-]{1,64} (OpenAI's rule) and are unique; parameters
//                        is a JSON schema object (default: any object)
//   tool_choice          "none" | "auto" | "required" |
//                        {"type": "function", "function": {"name": …}} (one of the tools).
//                        Default: "auto" with tools, "none" without (OpenAI)
//   parallel_tool_calls  boolean (default true): with "required", false allows one call
//
// "required" and a named function constrain the output (vLLM's form): required to a JSON
// array of {"name", "parameters"} objects (no other members), one of the tools each (at least one call; at
// most one without parallel_tool_calls); a named function to its parameters (the output
// is the call's arguments). The schema is compiled by guided::JsonSchemaToGbnf into the
// generation's grammar (constraint_kind "tools"). "auto" leaves the output free: the
// model's chat-template family decides the format (tool_call_parser.h). "none" renders
// the tools into the prompt (vLLM's default) and parses nothing.
//
// Thread-safe (pure functions).
#ifndef INFERA_OPENAI_CHAT_TOOLS_H_
#define INFERA_OPENAI_CHAT_TOOLS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/chat_message.h"
#include "api/sampling_params.h"
#include "rapidjson/document.h"

namespace infera::openai {

inline constexpr size_t kMaxTools = 128;  // OpenAI's limit
inline constexpr size_t kMaxToolNameBytes = 64;

enum class ToolChoiceMode { kNone, kAuto, kRequired, kNamed };

struct ToolChoice {
  ToolChoiceMode mode = ToolChoiceMode::kNone;
  std::string name;  // kNamed: the function
};

struct ChatTools {
  std::vector<ChatTool> tools;
  std::vector<bool> strict;  // per tool: function.strict
  ToolChoice choice;
  bool parallel_tool_calls = true;
};

// InvalidArgument naming the field (tools[i].function.name, tool_choice, …).
absl::StatusOr<ChatTools> ParseChatTools(const rapidjson::Value& doc);

// A function name OpenAI accepts: [A-Za-z0-9_-]{1,64}.
bool IsValidToolName(std::string_view name);

// The JSON schema that `required` / a named function constrains the output to (empty
// for none and auto).
std::string ToolChoiceSchema(const ChatTools& tools);

// Compiles ToolChoiceSchema into `sampling` (grammar, constraint_kind "tools") for
// required and named; nothing for none and auto. InvalidArgument naming `tools` when a
// parameters schema uses what the compiler does not support.
absl::Status ApplyToolChoice(const ChatTools& tools, SamplingParams& sampling);

}  // namespace infera::openai

#endif  // INFERA_OPENAI_CHAT_TOOLS_H_
