// SpeculativeConfig: how the LLM engine speculates (docs/speculative_decoding.md), from
// the model's config.pbtxt parameters with vLLM's names (llm_model_options.h):
//
//   speculative_model        "[ngram]": n-gram prompt lookup (no draft model); a
//                            directory relative to the model's version directory: a
//                            draft model (draft_model_proposer.h); unset: off
//   num_speculative_tokens   tokens proposed per step and request (required with it)
//   ngram_prompt_lookup_max  longest suffix looked up in the request's tokens
//   ngram_prompt_lookup_min  shortest suffix that may still match
//
// A value type; thread-safe.
#ifndef INFERA_LLM_SPECULATIVE_CONFIG_H_
#define INFERA_LLM_SPECULATIVE_CONFIG_H_

#include <cstdint>
#include <string>

namespace infera::llm {

struct SpeculativeConfig {
  enum class Method { kNone, kNgram, kDraftModel };
  Method method = Method::kNone;
  // kDraftModel: the draft's directory as configured, relative to the version directory
  // (no "..", not absolute; containment after symlinks is checked at load).
  std::string draft_model_dir;
  int32_t num_speculative_tokens = 0;
  int32_t ngram_prompt_lookup_max = 4;
  int32_t ngram_prompt_lookup_min = 1;

  bool enabled() const { return method != Method::kNone && num_speculative_tokens > 0; }
};

}  // namespace infera::llm

#endif  // INFERA_LLM_SPECULATIVE_CONFIG_H_
