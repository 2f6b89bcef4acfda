#include "llm/cpu_kernels.h"

#include <algorithm>
#include <cmath>

// Built with -O3 -fopenmp-simd (see CMakeLists.txt): the `omp simd` reductions below
// vectorise without -ffast-math; target_clones picks AVX-512/AVX2 code at load time.
#define INFERA_KERNEL __attribute__((target_clones("avx512f", "avx2", "default")))

namespace infera::llm {

INFERA_KERNEL
void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = weight[i] * (x[i] * inv);
}

INFERA_KERNEL
void ApplyRope(float* x, int64_t num_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < num_heads; ++h) {
    float* a = x + h * head_dim;
    float* b = a + half;
#pragma omp simd
    for (int64_t i = 0; i < half; ++i) {
      const float x1 = a[i], x2 = b[i];
      a[i] = x1 * cos[i] - x2 * sin[i];
      b[i] = x2 * cos[i] + x1 * sin[i];
    }
  }
}

INFERA_KERNEL
void SiluMul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

INFERA_KERNEL
void PagedAttentionHead(const float* q, const float* k_cache, const float* v_cache,
                        const int32_t* block_table, int64_t context_len, int64_t kv_head,
                        const PagedKvLayout& layout, float scale, float* scratch, float* out) {
  const int64_t d = layout.head_dim;
  const int64_t bs = layout.block_size;
  const int64_t stride = layout.SlotStride();
  float max_score = -INFINITY;
  for (int64_t p = 0; p < context_len; ++p) {
    const int64_t slot = static_cast<int64_t>(block_table[p / bs]) * bs + p % bs;
    const float* k = k_cache + slot * stride + kv_head * d;
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (int64_t i = 0; i < d; ++i) dot += q[i] * k[i];
    scratch[p] = dot * scale;
    max_score = std::max(max_score, scratch[p]);
  }
  float denom = 0.0f;
  for (int64_t p = 0; p < context_len; ++p) {
    scratch[p] = std::exp(scratch[p] - max_score);
    denom += scratch[p];
  }
  const float inv = 1.0f / denom;
  std::fill(out, out + d, 0.0f);
  for (int64_t p = 0; p < context_len; ++p) {
    const int64_t slot = static_cast<int64_t>(block_table[p / bs]) * bs + p % bs;
    const float* v = v_cache + slot * stride + kv_head * d;
    const float w = scratch[p] * inv;
#pragma omp simd
    for (int64_t i = 0; i < d; ++i) out[i] += w * v[i];
  }
}

}  // namespace infera::llm
