// TextGenerator: the capability of a loaded model that generates text (an LLM), without
// knowing how it runs. The `llm` backend's LoadedModel offers it; the request path finds it
// with the typed query LoadedModel::text_generator() / ModelVersion::text_generator() (null:
// the model generates no text), and every generation goes through
// ModelVersion::Generate (docs/request_path.md), which calls Generate() below.
//
// Generate() returns at once on the caller's thread: everything proportional to the
// prompt — chat-template rendering, tokenisation, the echo text, the length check — runs
// off the caller's thread (the LLM's prompt worker), which then queues the request on the
// engine. `callbacks.admitted` is called exactly once, with OK (outputs follow, the last
// one final) or the reason the request was refused (then no output): see
// GenerationCallbacks (api/generation.h).
//
// Lifetime: the caller keeps the model alive (ModelVersion::Generate holds a handle to
// the version) until the final output or the refusal has been delivered.
//
// Thread-safe.
#ifndef INFERA_BACKEND_TEXT_GENERATOR_H_
#define INFERA_BACKEND_TEXT_GENERATOR_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "api/generation.h"
#include "api/generation_metrics.h"

namespace infera {

class TextGenerator {
 public:
  virtual ~TextGenerator() = default;

  virtual const std::string& name() const = 0;
  // The longest prompt + output the model takes, in tokens.
  virtual int64_t max_model_len() const = 0;
  virtual int64_t created_unix_seconds() const = 0;
  // The bytes of token `id` (for logprobs' token texts); empty for an unknown id.
  virtual std::string_view TokenBytes(int32_t id) const = 0;
  // How the model's chat template writes tool calls (kNone: no chat template, or a
  // family without a tool format); the OpenAI routes parse `tool_choice: auto` output
  // with it (src/openai/tool_call_parser.h).
  virtual ToolCallFormat tool_call_format() const { return ToolCallFormat::kNone; }
  // The engine's counters and histograms now (diagnosis, console).
  virtual GenerationMetrics Metrics() const = 0;

  // See the file comment. Never blocks on the prompt.
  virtual void Generate(GenerationRequest request, GenerationCallbacks callbacks) = 0;
};

}  // namespace infera

#endif  // INFERA_BACKEND_TEXT_GENERATOR_H_
