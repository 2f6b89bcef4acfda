// The model's element-wise and attention kernels on plain float arrays (no LibTorch):
// RMSNorm, rotary embedding, SwiGLU, paged-KV writes and paged attention. The model
// runner calls them inside at::parallel_for ranges; GEMMs go to ATen/BLAS.
//
// Why own kernels: at these model sizes one step is dominated by BLAS and by per-op
// overhead; paged attention written directly against the block table needs no gather
// copy and one call per layer instead of ~10 ATen ops per sequence (measured in
// docs/llm.md).
//
// KV cache layout of one layer (K and V alike):
//   float[num_blocks][block_size][num_kv_heads][head_dim]
//   slot s = block_id * block_size + offset  →  &cache[s * num_kv_heads * head_dim]
//
// Thread-safe: pure functions over the memory they are given.
#ifndef INFERA_LLM_CPU_KERNELS_H_
#define INFERA_LLM_CPU_KERNELS_H_

#include <cstdint>

namespace infera::llm {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i], i < n (Hugging Face LlamaRMSNorm).
void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* out);

// Rotates `num_heads` consecutive head vectors of `head_dim` in place, rotate-half
// layout: x[i] ← x[i]·cos[i] − x[i+h]·sin[i], x[i+h] ← x[i+h]·cos[i] + x[i]·sin[i],
// h = head_dim / 2; cos/sin hold h values for this token's position.
void ApplyRope(float* x, int64_t num_heads, int64_t head_dim, const float* cos, const float* sin);

// out[i] = silu(gate[i]) * up[i].
void SiluMul(const float* gate, const float* up, int64_t n, float* out);

struct PagedKvLayout {
  int64_t block_size = 16;
  int64_t num_kv_heads = 1;
  int64_t head_dim = 64;
  int64_t SlotStride() const { return num_kv_heads * head_dim; }
};

// Attention of one query head over positions [0, context_len) of one sequence.
// `q` is head_dim values; the K/V of `kv_head` are read through `block_table`.
// `scratch` holds >= context_len floats; `out` receives head_dim values.
void PagedAttentionHead(const float* q, const float* k_cache, const float* v_cache,
                        const int32_t* block_table, int64_t context_len, int64_t kv_head,
                        const PagedKvLayout& layout, float scale, float* scratch, float* out);

}  // namespace infera::llm

#endif  // INFERA_LLM_CPU_KERNELS_H_
