// The sampling fields of a JSON object (vLLM's SamplingParams names), shared by every
// frontend that takes them as JSON: the OpenAI requests (openai/openai_requests.h) and
// an LLM's KServe / Triton `sampling_parameters` input (the `llm` backend).
//
// Fields: temperature, top_p, top_k, min_p, max_tokens (also max_completion_tokens),
// stop (string or list), stop_token_ids, seed, presence_penalty, frequency_penalty,
// repetition_penalty, ignore_eos, include_stop_str_in_output, skip_special_tokens, n,
// best_of (unset or equal to n), min_tokens ([0, max_tokens]), logit_bias
// ({"<token id>": bias}, at most 1024 ids, biases clamped to [-100, 100]; ids outside the
// vocabulary are refused when the request reaches the engine). Integer fields are
// bounded here, far above any real model's context or vocabulary, so that nothing
// downstream (prompt length + max_tokens, top-k selection) can overflow. Every number of
// the wrong kind (a string, a fraction, an exponent past the integer range), out of its
// range or not finite is an InvalidArgument naming the field. A null value counts as
// absent (vLLM's Optional fields).
//
// Thread-safe (pure functions).
#ifndef INFERA_API_SAMPLING_PARAMS_JSON_H_
#define INFERA_API_SAMPLING_PARAMS_JSON_H_

#include "absl/status/status.h"
#include "api/sampling_params.h"
#include "rapidjson/document.h"

namespace infera {

// The most choices (`n`) one prompt may ask for.
inline constexpr int kMaxChoicesPerPrompt = 16;

// Reads the sampling fields of `obj` into `params` and validates the result
// (SamplingParams::Validate). `*max_tokens_set` (may be null) reports whether a limit was
// given. `n`: where the caller can return several choices per prompt (n in [1,
// kMaxChoicesPerPrompt]); null: n must be 1. `max_tokens_default_from_context`: a
// max_tokens not given will be what the prompt leaves of the context (chat), known only
// once the prompt is tokenised, so min_tokens is not checked against the default here.
// InvalidArgument naming the field.
absl::Status ParseSamplingFields(const rapidjson::Value& obj, SamplingParams& params, bool* max_tokens_set,
                                 int* n = nullptr, bool max_tokens_default_from_context = false);

}  // namespace infera

#endif  // INFERA_API_SAMPLING_PARAMS_JSON_H_
