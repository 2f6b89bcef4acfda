// Text generation, transport-neutral: what a frontend (the OpenAI routes, the KServe /
// Triton tensor adapter of an LLM) asks of a model that generates text, and what it gets
// back. The model side is backend/text_generator.h (the TextGenerator capability), the
// request path ModelVersion::Generate (manager/model_version.h); docs/request_path.md.
//
//   GenerationRequest ──ModelVersion::Generate──> admitted(status) once
//                                               ──> GenerationOutput × n (the last has
//                                                   finish_reason != kNone and timings)
//
// Value types; thread-safe to copy.
#ifndef INFERA_API_GENERATION_H_
#define INFERA_API_GENERATION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "api/cancellation.h"
#include "api/chat_message.h"
#include "api/sampling_params.h"

namespace infera {

// Why a generation ended. kAbort: cancelled (client gone, deadline, unload).
enum class FinishReason { kNone, kStop, kLength, kAbort, kError };
// OpenAI's names: "stop", "length", "abort", "error" ("" for kNone).
std::string_view FinishReasonName(FinishReason reason);

struct TokenLogprob {
  int32_t token_id = 0;
  float logprob = 0.0f;
};

struct GenerationRequest {
  // The prompt: exactly one of text (tokenised with the tokenizer's special tokens),
  // token ids, or chat messages (rendered with the model's chat template).
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_ids;
  std::optional<std::vector<ChatMessage>> messages;
  bool add_generation_prompt = true;  // chat only
  // Chat only: the functions the model may call, rendered into the prompt by the chat
  // template (its family's format: TextGenerator::tool_call_format()).
  std::vector<ChatTool> tools;

  SamplingParams sampling;
  // False: max_tokens is whatever max_model_len leaves after the prompt (chat's default).
  bool max_tokens_set = true;
  // Admission reports the prompt's text (for completions' `echo`).
  bool echo = false;
  int priority = 0;
  std::shared_ptr<const CancellationToken> cancellation;  // may be null
  // Past it the generation ends with kAbort (DeadlineExceeded); unset: none.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::chrono::steady_clock::time_point arrival_time = std::chrono::steady_clock::now();
};

// Where a generation's time went, on its final output (for traces and statistics).
// Unset points are default-constructed (e.g. never scheduled).
struct GenerationTimings {
  std::chrono::steady_clock::time_point arrival{};      // the request was read
  std::chrono::steady_clock::time_point queued{};       // the prompt was tokenised, queued on the engine
  std::chrono::steady_clock::time_point scheduled{};    // its first engine step
  std::chrono::steady_clock::time_point first_token{};  // its first output token
  std::chrono::steady_clock::time_point finished{};     // its last output
  std::chrono::nanoseconds detokenize{0};               // output processing (detokenise, stop strings)
};

// One streamed piece of a generation. Every admitted generation gets one or more; the
// last has finish_reason != kNone.
struct GenerationOutput {
  std::string text;                // new text since the previous output (valid UTF-8)
  std::vector<int32_t> token_ids;  // new tokens
  std::vector<float> logprobs;     // per new token, when requested
  // Per new token, with top_logprobs > 0: the most likely tokens, most likely first.
  std::vector<std::vector<TokenLogprob>> top_logprobs;
  FinishReason finish_reason = FinishReason::kNone;
  absl::Status error;              // set when finish_reason is kError or kAbort
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;   // so far
  int64_t num_cached_tokens = 0;   // prompt tokens served from the prefix cache
  double queue_seconds = 0;        // arrival → first scheduled (0 if never scheduled)
  GenerationTimings timings;       // set on the final output
};

// `echo_text`: the prompt's text when the request asked for it, else empty.
using GenerationAdmitted = absl::AnyInvocable<void(absl::Status status, std::string echo_text)>;
using GenerationOutputCallback = absl::AnyInvocable<void(GenerationOutput output)>;

// What a generation reports to its caller. `admitted` is called exactly once: OK (the
// request is queued; `output` then receives one or more outputs, the last final) or the
// reason it was refused (InvalidArgument naming the field or the limit; ResourceExhausted
// when the queue is full; Unavailable when the model is retiring) — then `output` is
// never called. Both may run on any thread and must not block.
struct GenerationCallbacks {
  GenerationAdmitted admitted;
  GenerationOutputCallback output;
};

}  // namespace infera

#endif  // INFERA_API_GENERATION_H_
