// LlamaConfig: the architecture of a Llama-family decoder read from a Hugging Face
// `config.json`: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM, Phi3ForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM (text).
//
// The supported family: pre-norm decoder layers with RMSNorm, rotary position
// embeddings in Hugging Face's rotate-half layout (`rope_theta`; `rope_scaling` of type
// "linear", "llama3", or Phi-3's "longrope" up to its original length), grouped-query attention (num_key_value_heads), a gated MLP
// (SwiGLU, or GeGLU with gelu_pytorch_tanh), tied or untied output embedding, optional
// q/k/v(/o) biases (Qwen2; Llama's `attention_bias`), and the per-architecture variations
// below (docs/llm.md, "Architectures"): per-head q/k RMSNorm (Qwen3, Gemma-3), fused
// qkv / gate-up weights (Phi-3), Gemma's (1 + w) norms, sandwich norms, scaled
// embeddings, query_pre_attn_scalar and logit soft-capping, and sliding-window attention
// per layer (Mistral, Phi-3, Qwen2/3 `use_sliding_window`, Gemma-2's alternating and
// Gemma-3's local/global layers with their own rope base). Anything else is a load error
// naming the field.
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
  std::string type;  // "" (none), "linear", "llama3", "longrope" (Phi-3; "su" too), "yarn"
  double factor = 1.0;
  // Per-frequency divisors (head_dim / 2 values, each finite and > 0; empty: none):
  // rotary frequency i is base^(-2i/d) / frequency_divisors[i] at every position, before
  // the type's own scaling (linear's factor). longrope: its short_factor, used up to
  // original_max_position_embeddings (unless use_long_factor). A GGUF's rope_freqs tensor
  // (llama.cpp's form of Llama 3.1's llama3 scaling) with type "" or "linear". Gemma-3's
  // local rope never uses them.
  std::vector<double> frequency_divisors;
  // longrope: long_factor (head_dim / 2 divisors), for contexts past
  // original_max_position_embeddings.
  std::vector<double> long_factor;
  // longrope: every position rotates with long_factor instead of frequency_divisors.
  // Chosen once, at load, from the context served (SelectLongRopeRegime).
  bool use_long_factor = false;
  // cos and sin are multiplied by it (longrope, yarn; 1 otherwise).
  double attention_factor = 1.0;
  // yarn: the ramp between extrapolated (fast, beta_fast rotations) and interpolated
  // (slow, beta_slow) frequencies over original_max_position_embeddings; `truncate`
  // rounds its bounds outwards to whole dimensions.
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  bool truncate = true;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

// The attention factors a config may leave out, derived from the scaling factor (1 where
// it does not stretch the context, factor <= 1). One spelling for config.json, GGUF and
// convert, so the three read and write the same value.
// YaRN: 0.1 · mscale · ln factor + 1.
double YarnAttentionFactor(double factor, double mscale = 1.0);
// longrope (Phi-3): sqrt(1 + ln factor / ln original_length).
double LongRopeAttentionFactor(double factor, double original_length);

// The MLP's gate activation: silu (SwiGLU) or gelu_pytorch_tanh (GeGLU).
enum class MlpActivation { kSilu, kGeluTanh };

struct LlamaConfig {
  // "llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2", "gemma3_text"
  std::string model_type;
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
  int64_t sliding_window = 0;  // 0: none; which layers use it: layer_window
  MlpActivation activation = MlpActivation::kSilu;
  // Phi-3: q/k/v in one `qkv_proj` and gate/up in one `gate_up_proj` weight.
  bool fused_weights = false;
  // Qwen3, Gemma-3: RMSNorm over each head's q and k (weights [head_dim]) before RoPE.
  bool qk_norm = false;
  // Gemma: every RMSNorm multiplies by (1 + w) (applied once at load), the embeddings
  // are scaled by sqrt(hidden_size), and each layer has sandwich norms: the attention
  // and MLP outputs are normed before their residual add (post_attention_layernorm,
  // post_feedforward_layernorm), pre_feedforward_layernorm feeds the MLP.
  bool gemma = false;
  double embedding_scale = 1.0;
  // Attention scores are q·k / sqrt(query_pre_attn_scalar) (Gemma), else / sqrt(head_dim).
  double query_pre_attn_scalar = 0;
  // cap · tanh(x / cap) on attention scores / final logits; 0: none.
  double attn_logit_softcapping = 0;
  double final_logit_softcapping = 0;
  // Per layer: the sliding window (a query at position p sees keys p - w + 1 .. p), or
  // 0 for full attention. Parse fills one per layer; read it through WindowOf().
  std::vector<int64_t> layer_window;
  // Gemma-3: the sliding (local) layers' rope base, unscaled; 0: every layer uses
  // rope_theta and rope_scaling.
  double rope_local_theta = 0;
  bool tie_word_embeddings = false;
  std::string torch_dtype;  // informational: "float32", "bfloat16", ...
  std::vector<int64_t> eos_token_ids;  // from config.json, may be empty
  int64_t bos_token_id = -1;

  // Parses `text` (the contents of config.json). InvalidArgument naming the field.
  static absl::StatusOr<LlamaConfig> Parse(std::string_view text);
  static absl::StatusOr<LlamaConfig> Load(const std::filesystem::path& config_json);

  // The rotary inverse frequencies (head_dim / 2 values), computed in float exactly as
  // Hugging Face does, with rope_scaling applied; `local`: Gemma-3's local-layer rope
  // (rope_local_theta, no scaling).
  std::vector<float> RopeInverseFrequencies(bool local = false) const;

  // longrope (Phi-3's 128k variants) and a context of `max_model_len` positions: past
  // original_max_position_embeddings every position rotates with the long factors
  // (use_long_factor), otherwise with the short ones. llama.cpp's rule (n_ctx >
  // n_ctx_orig); Hugging Face instead picks by each forward's current length, which
  // gives a sequence that crosses the boundary no single rotation (docs/llm.md,
  // "Phi-3 longrope"). Other rope types: no effect.
  void SelectLongRopeRegime(int64_t max_model_len);
  // Whether layer `l` uses the local rope (rope_local_theta set and the layer slides).
  bool UsesLocalRope(int64_t l) const { return rope_local_theta > 0 && WindowOf(l) > 0; }
  // layer_window[l], or 0 (full attention) where a config built in code left it empty.
  int64_t WindowOf(int64_t l) const {
    return l >= 0 && l < static_cast<int64_t>(layer_window.size()) ? layer_window[static_cast<size_t>(l)] : 0;
  }
  float AttentionScale() const;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLAMA_CONFIG_H_
