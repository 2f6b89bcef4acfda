// The OpenAI response bodies of /v1/completions and /v1/chat/completions: whole answers,
// streamed chunks (the JSON of one Server-Sent Event) and the final usage chunk, and the
// response ids. Pure functions; the generation job (generation_job.h) decides what to
// render when, openai_errors.h renders errors.
//
// Thread-safe (pure functions).
#ifndef INFERA_OPENAI_OPENAI_RESPONSES_H_
#define INFERA_OPENAI_OPENAI_RESPONSES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/generation.h"

namespace infera::openai {

// A fresh response id: `prefix` then 32 hex digits (128 bits from std::random_device,
// the OS's CSPRNG), so ids do not repeat across requests, processes or restarts.
std::string NewResponseId(std::string_view prefix);

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
};

// One alternative token with its logprob.
struct TopToken {
  std::string token;  // display text (valid UTF-8) or "token_id:<id>"
  std::string bytes;  // the token's raw bytes (chat's `bytes`)
  float logprob = 0.0f;
};

// One tool call of a chat choice, or (streamed) a piece of one: a call's first delta
// carries its id and name, later ones pieces of its arguments (OpenAI's stream shape).
struct ToolCallDelta {
  int index = 0;          // which call of the choice
  std::string id;         // "call_…"; empty: a continuation
  std::string name;       // with the id
  std::string arguments;  // JSON text, whole or a piece
};

// One choice's content for a response or a chunk. The per-token vectors run in
// parallel: logprobs[i] is of tokens[i] (empty logprobs: no logprobs in the output).
struct ChoiceDelta {
  int index = 0;
  std::string text;
  std::vector<std::string> tokens;       // display texts (or "token_id:<id>")
  std::vector<std::string> token_bytes;  // raw bytes, for chat's `bytes`
  std::vector<float> logprobs;
  std::vector<std::vector<TopToken>> top;  // empty, or one list per token
  std::vector<int64_t> text_offsets;       // completions: where each token starts in the text
  std::optional<FinishReason> finish_reason;
  // Chat: the tool calls (whole in a response, pieces in a chunk); with calls, empty
  // text is written as "content": null.
  std::vector<ToolCallDelta> tool_calls;
  // finish_reason "stop" is written "tool_calls" (the model called tools).
  bool finished_with_tool_calls = false;
};

std::string CompletionJson(std::string_view id, int64_t created, std::string_view model,
                           const std::vector<ChoiceDelta>& choices, const Usage& usage);
std::string CompletionChunkJson(std::string_view id, int64_t created, std::string_view model,
                                const ChoiceDelta& choice);
std::string ChatJson(std::string_view id, int64_t created, std::string_view model,
                     const std::vector<ChoiceDelta>& choices, const Usage& usage);
// `first`: the chunk carries the assistant role.
std::string ChatChunkJson(std::string_view id, int64_t created, std::string_view model,
                          const ChoiceDelta& choice, bool first);
// The final usage-only chunk of a stream (stream_options.include_usage).
std::string UsageChunkJson(std::string_view id, int64_t created, std::string_view model,
                           std::string_view object, const Usage& usage);

// One Server-Sent Event carrying `json` ("data: <json>\n\n"), and the stream's end.
std::string SseEvent(std::string_view json);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace infera::openai

#endif  // INFERA_OPENAI_OPENAI_RESPONSES_H_
