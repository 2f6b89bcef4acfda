// TextGenerator: what a frontend (the OpenAI routes) needs from an LLM, without knowing
// how it runs. The `llm` backend's LoadedModel implements it (llm_backend.h); the
// OpenAI routes find it by downcasting ModelVersion::loaded_model() to this interface,
// so the HTTP layer links the LibTorch-free LLM core only.
//
// Generate() returns at once on the caller's (I/O) thread: everything proportional to
// the prompt — chat-template rendering, tokenisation, the echo text, the length check —
// runs on the model's prompt worker, which then queues the request on the engine.
// `admitted` is called exactly once — on that worker, or on the caller's thread when the
// prompt's size alone shows that it cannot fit max_model_len (prompt_length.h: checked
// before it is queued, with no rendering or tokenising) or the worker's queue refuses
// the request — with OK (the request is queued:
// `output` will receive one or more outputs, the last with a finish reason) or with the
// reason it was refused (InvalidArgument naming the field or the limit, e.g. a prompt
// longer than max_model_len; ResourceExhausted when the queue is full; Unavailable when
// the model is retiring) — then `output` is never called.
//
// Lifetime: the caller keeps the model alive (it holds the ModelVersion handle) until
// the last output or a refusal has been delivered.
//
// Thread-safe.
#ifndef INFERA_LLM_TEXT_GENERATOR_H_
#define INFERA_LLM_TEXT_GENERATOR_H_

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
#include "llm/chat_template.h"
#include "llm/llm_engine.h"
#include "llm/sampling_params.h"

namespace infera::llm {

struct TextGenerationRequest {
  // The prompt: exactly one of text (tokenised with the tokenizer's special tokens),
  // token ids, or chat messages (rendered with the model's chat template).
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_ids;
  std::optional<std::vector<ChatMessage>> messages;
  bool add_generation_prompt = true;  // chat only

  SamplingParams sampling;
  // False: max_tokens is whatever max_model_len leaves after the prompt (chat's default).
  bool max_tokens_set = true;
  // Admission reports the prompt's text (for completions' `echo`).
  bool echo = false;
  int priority = 0;
  std::shared_ptr<const CancellationToken> cancellation;  // may be null
  std::chrono::steady_clock::time_point arrival_time = std::chrono::steady_clock::now();
};

// `echo_text`: the prompt's text when the request asked for it, else empty.
using AdmissionCallback = absl::AnyInvocable<void(absl::Status status, std::string echo_text)>;

class TextGenerator {
 public:
  virtual ~TextGenerator() = default;

  virtual const std::string& name() const = 0;
  virtual int64_t max_model_len() const = 0;
  virtual int64_t created_unix_seconds() const = 0;
  // The bytes of token `id` (for logprobs' token texts).
  virtual std::string_view TokenBytes(int32_t id) const = 0;

  // See the file comment. Never blocks on the prompt.
  virtual void Generate(TextGenerationRequest request, AdmissionCallback admitted, OutputCallback output) = 0;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_TEXT_GENERATOR_H_
