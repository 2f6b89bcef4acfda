// The OpenAI-compatible wire format: request parsing and response/chunk building for
// /v1/completions and /v1/chat/completions (with vLLM's extra sampling fields), and
// OpenAI-shaped errors. Pure functions over JSON text; the HTTP routes
// (http/openai_routes.h) do the I/O.
//
// Sampling fields accepted (both endpoints): temperature, top_p, top_k, min_p, max_tokens
// (chat also max_completion_tokens), stop (string or list), stop_token_ids, seed,
// presence_penalty, frequency_penalty, repetition_penalty, ignore_eos,
// include_stop_str_in_output, skip_special_tokens, n, best_of (unset or equal to n),
// priority, min_tokens ([0, max_tokens]), logit_bias ({"<token id>": bias}, at most
// 1024 ids, biases clamped to [-100, 100]; ids outside the vocabulary are refused when
// the request reaches the engine); logprobs (completions: an integer k in [0, 20], the chosen token's logprob
// plus the k most likely tokens; chat: `logprobs: true` plus `top_logprobs: k`, k in
// [0, 20]); return_tokens_as_token_ids (vLLM: tokens rendered "token_id:<id>").
// Completions' `prompt`: a string, a list of token ids, or a list of either (a batch,
// at most kMaxPrompts). n in [1, kMaxN]; prompts × n at most kMaxChoices.
//
// Every number is checked where it is read: of the wrong kind (a string, a fraction, an
// exponent past the integer range), out of its range or not finite, it is a 400 naming
// the field; null is the field's default (vLLM's Optional fields).
//
// Thread-safe (pure functions).
#ifndef INFERA_LLM_OPENAI_PROTOCOL_H_
#define INFERA_LLM_OPENAI_PROTOCOL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "llm/chat_template.h"
#include "llm/llm_request.h"
#include "api/sampling_params.h"
#include "rapidjson/document.h"

namespace infera::llm {

// Bounds on one request's fan-out (each choice is one generation on the engine, which
// admits them through its own queue limit).
inline constexpr int kMaxN = 16;
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
};

// InvalidArgument naming the field.
absl::StatusOr<CompletionRequest> ParseCompletionRequest(std::string_view body);
absl::StatusOr<ChatRequest> ParseChatRequest(std::string_view body);
// The sampling fields of `obj` into `params` (also used for KServe's
// `sampling_parameters`). `*max_tokens_set` reports whether a limit was given. `n`:
// where the caller can return several choices (n in [1, kMaxN]); null: n must be 1.
absl::Status ParseSamplingFields(const rapidjson::Value& obj, SamplingParams& params, bool* max_tokens_set,
                                 int* n = nullptr);

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
// {"error": {"message", "type", "param", "code"}}; type: BadRequestError (4xx),
// NotFoundError (404), RateLimitError (429), ServiceUnavailableError (503, retryable:
// e.g. the model is still loading), InternalServerError (other 5xx).
std::string OpenAiErrorJson(int http_status, std::string_view message);

}  // namespace infera::llm

#endif  // INFERA_LLM_OPENAI_PROTOCOL_H_
