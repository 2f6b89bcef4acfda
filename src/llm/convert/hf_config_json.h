// The Hugging Face config.json of a LlamaConfig read from a GGUF file: the inverse of
// LlamaConfig::Parse for the architectures GGUF carries. A llama file with a sliding
// window becomes a Mistral config; windows are written per layer as `layer_types`, so
// every family's default rule is bypassed and the layers are exactly the GGUF's. longrope
// (Phi-3's rope_factors tensors) is written exactly: its short / long factor lists,
// original_max_position_embeddings, and attention_factor where it is not Hugging Face's
// derived value. (Arbitrary per-frequency divisors have no form here: the caller refuses them.)
//
// Thread-safe (a pure function).
#ifndef INFERA_LLM_CONVERT_HF_CONFIG_JSON_H_
#define INFERA_LLM_CONVERT_HF_CONFIG_JSON_H_

#include <string>

#include "llm/llama_config.h"
#include "llm/safetensors.h"

namespace infera::llm::convert {

std::string HfConfigJson(const LlamaConfig& c, WeightType dtype);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_HF_CONFIG_JSON_H_
