// How a generation's output appears in an OpenAI choice: its new text, and — with
// logprobs — each new token's display text, raw bytes, logprob, the most likely
// alternatives and (completions) where the token starts in the choice's text.
//
//   tokens        the token's bytes with invalid UTF-8 replaced (U+FFFD), or
//                 "token_id:<id>" with return_tokens_as_token_ids (vLLM)
//   text_offset   Unicode code points before the token (Python's len(): vLLM's unit),
//                 counted from the choice's first generated token; the echoed prompt's
//                 length is added when the chunk is written (generation_job.h)
//   top           chat: the top_logprobs alternatives; completions: the alternatives
//                 plus the sampled token when it is not among them (OpenAI's "up to
//                 logprobs+1 elements", as vLLM), also with logprobs: 0
//
// Thread-safe (TokenRenderer is immutable; RenderOutput is a function of its arguments).
#ifndef INFERA_OPENAI_CHOICE_RENDERING_H_
#define INFERA_OPENAI_CHOICE_RENDERING_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "api/generation.h"
#include "backend/text_generator.h"
#include "openai/openai_responses.h"

namespace infera::openai {

enum class Endpoint { kCompletions, kChat };

// Unicode code points in valid UTF-8 `s`.
int64_t CodePoints(std::string_view s);

// A model's tokens as a client sees them. `model` must outlive the renderer.
class TokenRenderer {
 public:
  TokenRenderer(const TextGenerator& model, bool as_token_ids) : model_(model), as_token_ids_(as_token_ids) {}
  std::string Text(int32_t token) const;
  std::string_view Bytes(int32_t token) const { return model_.TokenBytes(token); }

 private:
  const TextGenerator& model_;
  const bool as_token_ids_;
};

// Choice `index`'s delta for `output` (its text moved out). With `logprobs`, the
// per-token fields too; `next_offset` is the choice's running text_offset (advanced
// past the new tokens). The finish reason is left unset: the caller decides.
ChoiceDelta RenderOutput(GenerationOutput& output, int index, Endpoint endpoint, bool logprobs,
                         const TokenRenderer& tokens, int64_t& next_offset);

}  // namespace infera::openai

#endif  // INFERA_OPENAI_CHOICE_RENDERING_H_
