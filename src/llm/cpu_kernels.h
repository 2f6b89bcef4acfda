// The model's element-wise and attention kernels on plain float arrays (no LibTorch):
// RMSNorm, rotary embedding, SwiGLU / GeGLU, paged-KV writes and paged attention. The model
// runner calls them inside at::parallel_for ranges; GEMMs go to ATen/BLAS.
//
// Why own kernels: at these model sizes one step is dominated by BLAS and by per-op
// overhead; paged attention written directly against the block table needs no gather
// copy and one call per layer instead of ~10 ATen ops per sequence (measured in
// docs/llm.md).
//
// KV cache layout of one layer (K and V alike), elements of the cache's KvCacheDtype
// (fp32, or bf16/fp16 stored as 16-bit words):
//   elem[num_blocks][block_size][num_kv_heads][head_dim]
//   slot s = block_id * block_size + offset  →  &cache[s * num_kv_heads * head_dim]
// 16-bit caches are narrowed on write (StoreKvRow, round to nearest even) and widened to
// fp32 in registers on read; all arithmetic is fp32.
//
// Paged attention has one implementation per instruction set (KvKernelIsa): AVX-512F,
// AVX2 + FMA + F16C, and a portable one; the best the CPU supports is chosen once per
// process. Every ISA computes the same math (summation order differs in the last bits).
//
// Thread-safe: pure functions over the memory they are given.
#ifndef INFERA_LLM_CPU_KERNELS_H_
#define INFERA_LLM_CPU_KERNELS_H_

#include <cstdint>
#include <cstring>

#include "llm/kv_cache_dtype.h"

namespace infera::llm {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i], i < n (Hugging Face LlamaRMSNorm).
void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* out);

// Rotates `num_heads` consecutive head vectors of `head_dim` in place, rotate-half
// layout: x[i] ← x[i]·cos[i] − x[i+h]·sin[i], x[i+h] ← x[i+h]·cos[i] + x[i]·sin[i],
// h = head_dim / 2; cos/sin hold h values for this token's position.
void ApplyRope(float* x, int64_t num_heads, int64_t head_dim, const float* cos, const float* sin);

// out[i] = silu(gate[i]) * up[i].
void SiluMul(const float* gate, const float* up, int64_t n, float* out);

// out[i] = gelu_tanh(gate[i]) * up[i] (GeGLU; PyTorch's gelu(approximate="tanh"):
// 0.5·g·(1 + tanh(sqrt(2/π)·(g + 0.044715·g³)))).
void GeluTanhMul(const float* gate, const float* up, int64_t n, float* out);

// What an architecture changes in attention besides the scale (docs/llm.md):
//   window_start   the first position attended (sliding window: p - window + 1), so
//                  the query sees positions [window_start, context_len)
//   logit_softcap  scores become cap · tanh(score / cap) before the softmax (Gemma-2);
//                  0: none
struct AttentionVariant {
  int64_t window_start = 0;
  float logit_softcap = 0.0f;
};

struct PagedKvLayout {
  int64_t block_size = 16;
  int64_t num_kv_heads = 1;
  int64_t head_dim = 64;
  int64_t SlotStride() const { return num_kv_heads * head_dim; }
};

// IEEE half → float, exact for every input (api/float16.h's HalfToFloat, inlined for the
// portable kernel's inner loop: shift the exponent/mantissa into place and rebias;
// subnormals renormalised by one float subtraction; inf/NaN keep their payload).
inline float HalfToFloatInline(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t bits = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t exponent = bits & 0x0f800000u;
  bits += (127u - 15u) << 23;
  float f;
  if (exponent == 0x0f800000u) {
    bits += (128u - 16u) << 23;  // inf / NaN
  } else if (exponent == 0) {
    bits += 1u << 23;  // subnormal or zero: 2^-14 · (1 + m) − 2^-14 = 2^-14 · m, exact
    std::memcpy(&f, &bits, sizeof f);
    f -= 6.103515625e-05f;
    std::memcpy(&bits, &f, sizeof f);
  }
  bits |= sign;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

enum class KvKernelIsa { kPortable, kAvx2, kAvx512 };
const char* KvKernelIsaName(KvKernelIsa isa);  // "portable", "avx2+f16c", "avx512f"
bool KvKernelIsaSupported(KvKernelIsa isa);     // by this CPU (and OS)
KvKernelIsa BestKvKernelIsa();                  // decided once per process

// Writes n floats into a cache row of `dtype` (`dst` holds n elements of it): a copy for
// fp32, round to nearest even for bf16/fp16 (kv_cache_dtype.h).
void StoreKvRow(const float* src, int64_t n, KvCacheDtype dtype, void* dst);

// Attention of one query head over positions [variant.window_start, context_len) of one
// sequence. `q` is head_dim values; the K/V of `kv_head` are read through `block_table`
// from caches of `dtype`. `scratch` holds >= context_len floats; `out` receives head_dim
// values. Runs on BestKvKernelIsa().
void PagedAttentionHead(const float* q, const void* k_cache, const void* v_cache, KvCacheDtype dtype,
                        const int32_t* block_table, int64_t context_len, int64_t kv_head,
                        const PagedKvLayout& layout, float scale, float* scratch, float* out,
                        const AttentionVariant& variant = {});
// The same on an explicit ISA, which must be supported (tests and benchmarks).
void PagedAttentionHeadOn(KvKernelIsa isa, const float* q, const void* k_cache, const void* v_cache,
                          KvCacheDtype dtype, const int32_t* block_table, int64_t context_len, int64_t kv_head,
                          const PagedKvLayout& layout, float scale, float* scratch, float* out,
                          const AttentionVariant& variant = {});
// fp32 caches (the signature before kv_cache_dtype).
inline void PagedAttentionHead(const float* q, const float* k_cache, const float* v_cache,
                               const int32_t* block_table, int64_t context_len, int64_t kv_head,
                               const PagedKvLayout& layout, float scale, float* scratch, float* out) {
  PagedAttentionHead(q, k_cache, v_cache, KvCacheDtype::kFloat32, block_table, context_len, kv_head, layout,
                     scale, scratch, out);
}

}  // namespace infera::llm

#endif  // INFERA_LLM_CPU_KERNELS_H_
