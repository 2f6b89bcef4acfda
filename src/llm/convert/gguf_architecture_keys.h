// The `general.*` and `<arch>.*` GGUF metadata of a LlamaConfig read from config.json:
// the inverse of llm/gguf_llama_config.h's LlamaConfigFromGguf for what GGUF can say.
//
// Architecture names: llama and mistral -> "llama", qwen2, qwen3, phi3, gemma2,
// gemma3_text -> "gemma3". Keys: block_count, context_length, embedding_length,
// feed_forward_length, attention.head_count(_kv), attention.key_length / value_length,
// rope.dimension_count, attention.layer_norm_rms_epsilon, rope.freq_base,
// rope.scaling.type / factor (linear), rope.scaling.original_context_length and
// attn_factor (longrope), attention.sliding_window (and gemma3's
// sliding_window_pattern), attention.scale (Gemma's query_pre_attn_scalar^-1/2),
// attn_logit_softcapping / final_logit_softcapping. llama3 and longrope's per-frequency
// factors are tensors (rope_factor_tensors.h), added by the caller.
// What GGUF cannot carry is an InvalidArgument naming it: other rope scaling types, sliding
// windows on Qwen2/3 or on a set of layers the architecture's GGUF rule does not give,
// a Gemma-3 local rope base other than 10000.
//
// Thread-safe (pure functions).
#ifndef INFERA_LLM_CONVERT_GGUF_ARCHITECTURE_KEYS_H_
#define INFERA_LLM_CONVERT_GGUF_ARCHITECTURE_KEYS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "llm/convert/gguf_writer.h"
#include "llm/llama_config.h"

namespace infera::llm::convert {

// "llama", "qwen2", ... or InvalidArgument for another model_type.
absl::StatusOr<std::string> GgufArchitecture(const LlamaConfig& c);

// Adds the keys to `w`; `name` becomes general.name.
absl::Status AddArchitectureKeys(const LlamaConfig& c, std::string_view name, GgufWriter& w);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_GGUF_ARCHITECTURE_KEYS_H_
