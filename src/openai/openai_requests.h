// The OpenAI request bodies of /v1/completions and /v1/chat/completions (with vLLM's
// extra fields), parsed into plain structs. Pure functions over JSON text; the routes
// (openai_routes.h) do the I/O, generation_requests.h turns a parsed request into the
// model's GenerationRequests.
//
// Both endpoints: model, stream, stream_options.include_usage, priority,
// return_tokens_as_token_ids, and the sampling fields (api/sampling_params_json.h: vLLM's
// names, n and best_of included). Completions: `prompt` — a string, a list of token ids,
// or a list of either (a batch, at most kMaxPrompts) — echo, and logprobs (an integer k
// in [0, 20]: the chosen token's logprob plus the k most likely tokens). Chat: messages
// (content a string or a list of text parts), add_generation_prompt, `logprobs: true`
// plus `top_logprobs: k` (k in [0, 20]). n in [1, kMaxN]; prompts × n at most
// kMaxChoices.
//
// Both endpoints take the structured-output fields (output_constraint.h:
// response_format, guided_json/regex/choice/grammar); chat takes tools, tool_choice and
// parallel_tool_calls (chat_tools.h) and messages with role "tool" (tool_call_id) and
// assistant messages with tool_calls (content may then be null). At most one output
// constraint: response_format or a guided_* field, or tool_choice required / a named
// function. /v1/completions refuses tools.
//
// Other fields are ignored, as vLLM does (it logs them; docs/llm.md "API").
//
// Errors: InvalidArgument naming the field.
//
// Thread-safe (pure functions).
#ifndef INFERA_OPENAI_OPENAI_REQUESTS_H_
#define INFERA_OPENAI_OPENAI_REQUESTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/chat_message.h"
#include "api/sampling_params.h"
#include "api/sampling_params_json.h"
#include "openai/chat_tools.h"

namespace infera::openai {

// Bounds on one request's fan-out (each choice is one generation on the engine, which
// admits them through its own queue limit).
inline constexpr int kMaxN = kMaxChoicesPerPrompt;
inline constexpr int kMaxPrompts = 64;
inline constexpr int kMaxChoices = 128;  // prompts × n

// One prompt of a completion request: text, or else token ids.
struct Prompt {
  std::optional<std::string> text;
  std::vector<int32_t> ids;
};

struct CompletionRequest {
  std::string model;
  std::vector<Prompt> prompts;  // at least one
  int n = 1;                    // choices per prompt
  bool return_tokens_as_token_ids = false;
  SamplingParams sampling;
  bool max_tokens_set = false;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool echo = false;
  int priority = 0;
};

struct ChatRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  int n = 1;
  bool return_tokens_as_token_ids = false;
  SamplingParams sampling;
  bool max_tokens_set = false;
  bool stream = false;
  bool include_usage = false;
  bool add_generation_prompt = true;
  int priority = 0;
  ChatTools tools;  // tools, tool_choice, parallel_tool_calls
};

// The most tool calls one assistant message may carry.
inline constexpr size_t kMaxToolCallsPerMessage = 128;

absl::StatusOr<CompletionRequest> ParseCompletionRequest(std::string_view body);
absl::StatusOr<ChatRequest> ParseChatRequest(std::string_view body);

}  // namespace infera::openai

#endif  // INFERA_OPENAI_OPENAI_REQUESTS_H_
