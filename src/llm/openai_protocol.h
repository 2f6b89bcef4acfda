// The OpenAI-compatible wire format: request parsing and response/chunk building for
// /v1/completions and /v1/chat/completions (with vLLM's extra sampling fields), and
// OpenAI-shaped errors. Pure functions over JSON text; the HTTP routes
// (http/openai_routes.h) do the I/O.
//
// Sampling fields accepted (both endpoints): temperature, top_p, top_k, min_p, max_tokens
// (chat also max_completion_tokens), stop (string or list), stop_token_ids, seed,
// presence_penalty, frequency_penalty, repetition_penalty, ignore_eos,
// include_stop_str_in_output, skip_special_tokens, n (1 only), priority; logprobs
// (completions: an integer, the chosen token's logprob is returned; chat: a bool).
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
#include "llm/sampling_params.h"
#include "rapidjson/document.h"

namespace infera::llm {

struct CompletionRequest {
  std::string model;
  std::optional<std::string> prompt_text;  // else prompt_ids
  std::vector<int32_t> prompt_ids;
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
// `sampling_parameters`). `*max_tokens_set` reports whether a limit was given.
absl::Status ParseSamplingFields(const rapidjson::Value& obj, SamplingParams& params, bool* max_tokens_set);

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
};

// One choice's content for a response or a chunk.
struct ChoiceDelta {
  std::string text;
  std::vector<std::string> tokens;  // token texts, for logprobs
  std::vector<float> logprobs;      // empty: no logprobs in the output
  std::optional<FinishReason> finish_reason;
};

std::string CompletionJson(std::string_view id, int64_t created, std::string_view model,
                           const ChoiceDelta& choice, const Usage& usage);
std::string CompletionChunkJson(std::string_view id, int64_t created, std::string_view model,
                                const ChoiceDelta& choice);
std::string ChatJson(std::string_view id, int64_t created, std::string_view model,
                     const ChoiceDelta& choice, const Usage& usage);
// `first`: the chunk carries the assistant role.
std::string ChatChunkJson(std::string_view id, int64_t created, std::string_view model,
                          const ChoiceDelta& choice, bool first);
// The final usage-only chunk of a stream (stream_options.include_usage).
std::string UsageChunkJson(std::string_view id, int64_t created, std::string_view model,
                           std::string_view object, const Usage& usage);
// {"error": {"message", "type", "param", "code"}}
std::string OpenAiErrorJson(int http_status, std::string_view message);

}  // namespace infera::llm

#endif  // INFERA_LLM_OPENAI_PROTOCOL_H_
