// ConfigDifferences: the architecture facts on which two LlamaConfigs disagree, used to
// check a conversion by reading its output back with the server's own reader (the GGUF
// keys through LlamaConfigFromGguf, config.json through LlamaConfig::Parse): anything the
// target format could not say shows up here and the conversion is refused.
//
// Compared: sizes, heads, head_dim, norm epsilon and rope base (relative 1e-5: GGUF
// stores float32), rope scaling by its effect (the rotary frequencies within relative
// 1e-6, so llama3's config.json parameters equal a GGUF's rope_freqs divisors; the
// cos/sin attention factor; longrope's original length and long factors), per-layer windows, activation, fused weights, q/k norm,
// Gemma's conventions (embedding scale, query_pre_attn_scalar, soft-capping, local rope),
// tied embeddings, context length. Not compared: model_type spelling, dtype, token ids.
//
// Thread-safe (a pure function).
#ifndef INFERA_LLM_CONVERT_CONFIG_DIFFERENCES_H_
#define INFERA_LLM_CONVERT_CONFIG_DIFFERENCES_H_

#include <string>
#include <vector>

#include "llm/llama_config.h"

namespace infera::llm::convert {

// "<field>: <want> vs <got>" per difference; empty when equivalent.
std::vector<std::string> ConfigDifferences(const LlamaConfig& want, const LlamaConfig& got);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_CONFIG_DIFFERENCES_H_
