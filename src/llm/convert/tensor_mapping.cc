#include "llm/convert/tensor_mapping.h"

#include "common/str_cat.h"
#include "llm/gguf_llama_config.h"

namespace infera::llm::convert {

int64_t HfRowOfGgufRow(int64_t s, int64_t rows, int64_t heads) {
  const int64_t d = rows / heads, half = d / 2;
  const int64_t h = s / d, k = s % d;
  return h * d + (k % 2) * half + k / 2;
}

int64_t GgufRowOfHfRow(int64_t r, int64_t rows, int64_t heads) {
  const int64_t d = rows / heads, half = d / 2;
  const int64_t h = r / d, k = r % d;
  return h * d + 2 * (k % half) + k / half;
}

std::vector<TensorMapping> TensorMappings(const LlamaConfig& c) {
  const int64_t h = c.hidden_size, d = c.head_dim, q = c.num_heads * d, kv = c.num_kv_heads * d,
                inter = c.intermediate_size;
  const bool permute = GgufQkPermuted(c);
  std::vector<TensorMapping> m;
  auto matrix = [&](std::string hf, std::string gguf, int64_t out, int64_t in, int64_t heads = 0) {
    m.push_back({std::move(hf), std::move(gguf), {out, in}, true, permute ? heads : 0, false, false});
  };
  auto norm = [&](std::string hf, std::string gguf, int64_t n) {
    m.push_back({std::move(hf), std::move(gguf), {n}, false, 0, c.gemma, false});
  };
  auto bias = [&](std::string hf, std::string gguf, int64_t n, int64_t heads = 0) {
    m.push_back({std::move(hf), std::move(gguf), {n}, false, permute ? heads : 0, false, true});
  };
  matrix("model.embed_tokens.weight", "token_embd.weight", c.vocab_size, h);
  norm("model.norm.weight", "output_norm.weight", h);
  if (!c.tie_word_embeddings) matrix("lm_head.weight", "output.weight", c.vocab_size, h);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = StrCat("model.layers.", i, "."), g = StrCat("blk.", i, ".");
    norm(p + "input_layernorm.weight", g + "attn_norm.weight", h);
    if (c.gemma) {
      norm(p + "post_attention_layernorm.weight", g + "post_attention_norm.weight", h);
      norm(p + "pre_feedforward_layernorm.weight", g + "ffn_norm.weight", h);
      norm(p + "post_feedforward_layernorm.weight", g + "post_ffw_norm.weight", h);
    } else {
      norm(p + "post_attention_layernorm.weight", g + "ffn_norm.weight", h);
    }
    if (c.qk_norm) {
      norm(p + "self_attn.q_norm.weight", g + "attn_q_norm.weight", d);
      norm(p + "self_attn.k_norm.weight", g + "attn_k_norm.weight", d);
    }
    if (c.fused_weights) {
      matrix(p + "self_attn.qkv_proj.weight", g + "attn_qkv.weight", q + 2 * kv, h);
      matrix(p + "mlp.gate_up_proj.weight", g + "ffn_up.weight", 2 * inter, h);
    } else {
      matrix(p + "self_attn.q_proj.weight", g + "attn_q.weight", q, h, c.num_heads);
      matrix(p + "self_attn.k_proj.weight", g + "attn_k.weight", kv, h, c.num_kv_heads);
      matrix(p + "self_attn.v_proj.weight", g + "attn_v.weight", kv, h);
      matrix(p + "mlp.gate_proj.weight", g + "ffn_gate.weight", inter, h);
      matrix(p + "mlp.up_proj.weight", g + "ffn_up.weight", inter, h);
      bias(p + "self_attn.q_proj.bias", g + "attn_q.bias", q, c.num_heads);
      bias(p + "self_attn.k_proj.bias", g + "attn_k.bias", kv, c.num_kv_heads);
      bias(p + "self_attn.v_proj.bias", g + "attn_v.bias", kv);
    }
    matrix(p + "self_attn.o_proj.weight", g + "attn_output.weight", h, q);
    bias(p + "self_attn.o_proj.bias", g + "attn_output.bias", h);
    matrix(p + "mlp.down_proj.weight", g + "ffn_down.weight", h, inter);
  }
  return m;
}

}  // namespace infera::llm::convert
