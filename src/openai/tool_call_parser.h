// Tool calls read back from a model's output (docs/structured_output.md "OpenAI
// surface"), whole or as the output streams.
//
// tool_choice auto — the model's chat-template family decides the format
// (api/chat_message.h ToolCallFormat), as vLLM's tool parsers read it:
//   Hermes/Qwen  content, then one or more <tool_call>{"name", "arguments"}</tool_call>
//                (the last one may be unterminated: the model stopped at EOS)
//   Llama-3      the whole output, after an optional <|python_tag|>, is one or more
//                {"name", "parameters" (or "arguments")} objects separated by ";"
//   Mistral      content, then [TOOL_CALLS] and a JSON array of {"name", "arguments"};
//                [TOOL_CALLS] is a special token, which skip_special_tokens (the
//                default) leaves out: an output that is such an array is calls too
// Output that does not parse as calls (bad JSON, a missing name, a truncated call) is
// content, unchanged: nothing the model wrote is lost.
// tool_choice required — the output is vLLM's JSON array of {"name", "parameters"}.
// A named function — the whole output is the call's arguments.
//
// Arguments come out as compact JSON text (OpenAI's `arguments` string). Every JSON
// value goes through common/json_reader.h (bounded depth, iterative parse).
//
// ToolCallStream (streaming): content streams as it arrives except the bytes that may
// begin a call's marker (Llama-3: an output beginning with "{"; Mistral: also one
// beginning with "[" is held to the end); a named call streams its arguments piece by piece; auto and
// required calls are sent whole once the output ended (the id and name first, then the
// arguments, as two deltas of the same index). Each call gets an id from `new_id`.
//
// Thread-compatible (ToolCallStream: one per choice, under the job's lock); the free
// functions are pure.
#ifndef INFERA_OPENAI_TOOL_CALL_PARSER_H_
#define INFERA_OPENAI_TOOL_CALL_PARSER_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/chat_message.h"
#include "openai/chat_tools.h"
#include "openai/openai_responses.h"

namespace infera::openai {

// Content and calls (ids empty) of a finished output.
struct ParsedToolOutput {
  std::string content;
  std::vector<ChatToolCall> calls;
};

// tool_choice auto: the calls in `text` written in `format` (none for kNone).
ParsedToolOutput ParseToolCalls(ToolCallFormat format, std::string_view text);
// tool_choice required: nullopt unless `text` is a JSON array of {"name", "parameters"}.
std::optional<std::vector<ChatToolCall>> ParseRequiredToolCalls(std::string_view text);

// Where a JSON object or array starting at text[start] ends (one past its closing
// bracket); npos when it is not closed in `text` (or text[start] opens none).
size_t JsonValueEnd(std::string_view text, size_t start);

class ToolCallStream {
 public:
  // What may go out now: content, and tool-call deltas (ToolCallDelta: openai_responses.h).
  struct Piece {
    std::string content;
    std::vector<ToolCallDelta> calls;
  };

  // `mode` kNone (or a kNone format with auto): everything is content.
  ToolCallStream(ToolChoiceMode mode, ToolCallFormat format, std::string named_function,
                 std::function<std::string()> new_id);

  Piece Add(std::string_view text);
  // The output ended: the rest.
  Piece Finish();
  // A call went out (finish_reason tool_calls for auto and required).
  bool called() const { return calls_ > 0; }

  // The whole output at once, as one piece (the deltas of a call merged into one).
  static Piece Whole(ToolChoiceMode mode, ToolCallFormat format, std::string named_function,
                     std::function<std::string()> new_id, std::string_view text);

 private:
  void EmitCalls(const std::vector<ChatToolCall>& calls, Piece& piece);
  // Auto: the marker that starts the calls ("" for Llama-3, which decides on the first
  // non-blank bytes).
  std::string_view Marker() const;

  const ToolChoiceMode mode_;
  const ToolCallFormat format_;
  const std::string named_;
  const std::function<std::string()> new_id_;
  std::string held_;      // not sent yet
  bool in_calls_ = false;  // auto: the calls began (held_ from their marker on)
  bool decided_ = false;   // Llama-3, Mistral: the output's first non-blank bytes were seen
  int calls_ = 0;
};

}  // namespace infera::openai

#endif  // INFERA_OPENAI_TOOL_CALL_PARSER_H_
