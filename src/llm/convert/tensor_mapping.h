// TensorMapping: which Hugging Face tensor is which GGUF tensor for an architecture, and
// how its values change between the two (docs/llm.md, "infera llm convert").
//
// Names: model.embed_tokens -> token_embd, model.norm -> output_norm, lm_head -> output
// (absent when the embeddings are tied), model.layers.N.* -> blk.N.*: input_layernorm ->
// attn_norm, post_attention_layernorm -> ffn_norm (Gemma: post_attention_norm, with
// pre_feedforward_layernorm -> ffn_norm and post_feedforward_layernorm -> post_ffw_norm),
// self_attn.{q,k,v,o}_proj -> attn_{q,k,v,output} (biases too), self_attn.{q,k}_norm ->
// attn_{q,k}_norm, mlp.{gate,up,down}_proj -> ffn_{gate,up,down}; Phi-3's fused
// self_attn.qkv_proj -> attn_qkv and mlp.gate_up_proj -> ffn_up (gate rows first, as the
// loader expects).
// Values: llama / Mistral attn_q / attn_k rows (and biases) are stored permuted from
// Hugging Face's rotate-half order to the interleaved order GGUF's llama uses
// (GgufRowOfHfRow; the loader undoes it); Gemma stores every RMSNorm weight as 1 + w.
//
// Thread-safe (pure functions).
#ifndef INFERA_LLM_CONVERT_TENSOR_MAPPING_H_
#define INFERA_LLM_CONVERT_TENSOR_MAPPING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "llm/llama_config.h"

namespace infera::llm::convert {

struct TensorMapping {
  std::string hf_name;
  std::string gguf_name;
  std::vector<int64_t> shape;  // row-major: [out, in] for matrices, [n] for vectors
  bool matrix = false;         // matrices take the chosen --type; vectors stay F32
  int64_t permute_heads = 0;   // > 0: rows permuted for interleaved RoPE, per head
  bool plus_one = false;       // Gemma's norms: GGUF = 1 + Hugging Face
  bool optional = false;       // biases: converted only when the source has them
};

// Every tensor of `c`'s architecture, in the order a GGUF file lists them.
std::vector<TensorMapping> TensorMappings(const LlamaConfig& c);

// Row permutation for interleaved RoPE within heads of `rows / heads` rows: GGUF row s
// holds Hugging Face row HfRowOfGgufRow(s), and the two functions are inverses.
int64_t HfRowOfGgufRow(int64_t gguf_row, int64_t rows, int64_t heads);
int64_t GgufRowOfHfRow(int64_t hf_row, int64_t rows, int64_t heads);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_TENSOR_MAPPING_H_
