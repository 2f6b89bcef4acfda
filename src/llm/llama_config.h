// LlamaConfig: the architecture of a Llama-family decoder read from a Hugging Face
// `config.json` (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM).
//
// The supported family: pre-norm decoder layers with RMSNorm, rotary position
// embeddings in Hugging Face's rotate-half layout (`rope_theta`; `rope_scaling` of type
// "linear" or "llama3"), grouped-query attention (num_key_value_heads), a SwiGLU MLP,
// tied or untied output embedding, and optional q/k/v(/o) biases (Qwen2 has q/k/v
// biases; Llama's `attention_bias`). Anything else is a load error naming the field.
//
// Thread-safe (a value type).
#ifndef INFERA_LLM_LLAMA_CONFIG_H_
#define INFERA_LLM_LLAMA_CONFIG_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::llm {

struct RopeScaling {
  std::string type;  // "" (none), "linear", "llama3"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct LlamaConfig {
  std::string model_type;  // "llama", "mistral", "qwen2"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  int64_t max_position_embeddings = 2048;
  int64_t sliding_window = 0;  // 0: none
  bool tie_word_embeddings = false;
  std::string torch_dtype;  // informational: "float32", "bfloat16", ...
  std::vector<int64_t> eos_token_ids;  // from config.json, may be empty
  int64_t bos_token_id = -1;

  // Parses `text` (the contents of config.json). InvalidArgument naming the field.
  static absl::StatusOr<LlamaConfig> Parse(std::string_view text);
  static absl::StatusOr<LlamaConfig> Load(const std::filesystem::path& config_json);

  // The rotary inverse frequencies (head_dim / 2 values), computed in float exactly as
  // Hugging Face does, with rope_scaling applied.
  std::vector<float> RopeInverseFrequencies() const;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLAMA_CONFIG_H_
