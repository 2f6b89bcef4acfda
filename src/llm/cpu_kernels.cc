#include "llm/cpu_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "api/float16.h"
#include "common/cpu_features.h"

// Built with -O3 -fopenmp-simd (see CMakeLists.txt): the `omp simd` reductions below
// vectorise without -ffast-math; target_clones picks AVX-512 / AVX + FMA code at load
// time. The middle clone is "fma" (which implies AVX: 256-bit vectors), not "avx2" (no
// FMA) nor "arch=x86-64-v3" (clang 14's resolver never selects it): an AVX2 + FMA CPU
// picks it (docs/llm.md, "Weight quantisation"). clang 14 emits no clones here at all
// (the declarations in cpu_kernels.h lack the attribute); g++ 12 does.
#define INFERA_KERNEL __attribute__((target_clones("avx512f", "fma", "default")))

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
void GeluTanhMul(const float* gate, const float* up, int64_t n, float* out) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * (g + 0.044715f * g * g * g))) * up[i];
  }
}

// ---- Paged attention over fp32 / bf16 / fp16 caches ----------------------------------
//
// One body (AttentionBody) over an `Ops` struct per instruction set that provides the two
// inner loops on a cache row: Dot(q, row) and Axpy(w, row, out), widening the row's
// elements to fp32 in registers. The per-ISA entry points are `flatten`ed, so the body and
// the Ops are inlined into code compiled for that ISA.

namespace {

template <KvCacheDtype D>
using Elem = std::conditional_t<D == KvCacheDtype::kFloat32, float, uint16_t>;

template <KvCacheDtype D>
inline float WidenScalar(Elem<D> x) {
  if constexpr (D == KvCacheDtype::kFloat32) return x;
  else if constexpr (D == KvCacheDtype::kBFloat16) return Bf16ToFloat(x);
  else return HalfToFloatInline(x);
}

struct PortableOps {
  template <KvCacheDtype D>
  static float Dot(const float* q, const Elem<D>* k, int64_t d) {
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (int64_t i = 0; i < d; ++i) dot += q[i] * WidenScalar<D>(k[i]);
    return dot;
  }
  template <KvCacheDtype D>
  static void Axpy(float w, const Elem<D>* v, int64_t d, float* out) {
#pragma omp simd
    for (int64_t i = 0; i < d; ++i) out[i] += w * WidenScalar<D>(v[i]);
  }
};

#define INFERA_AVX2 __attribute__((target("avx2,fma,f16c")))
#define INFERA_AVX512 __attribute__((target("avx512f")))

struct Avx2Ops {
  template <KvCacheDtype D>
  INFERA_AVX2 static __m256 Load8(const Elem<D>* p) {
    if constexpr (D == KvCacheDtype::kFloat32) {
      return _mm256_loadu_ps(p);
    } else {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      if constexpr (D == KvCacheDtype::kFloat16) return _mm256_cvtph_ps(h);
      // bf16 is the high half of an fp32: zero-extend to 32 bits, shift left by 16.
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
  }
  template <KvCacheDtype D>
  INFERA_AVX2 static float Dot(const float* q, const Elem<D>* k, int64_t d) {
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= d; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), Load8<D>(k + i), acc);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    float dot = _mm_cvtss_f32(s);
    for (; i < d; ++i) dot += q[i] * WidenScalar<D>(k[i]);
    return dot;
  }
  template <KvCacheDtype D>
  INFERA_AVX2 static void Axpy(float w, const Elem<D>* v, int64_t d, float* out) {
    const __m256 wv = _mm256_set1_ps(w);
    int64_t i = 0;
    for (; i + 8 <= d; i += 8) _mm256_storeu_ps(out + i, _mm256_fmadd_ps(wv, Load8<D>(v + i), _mm256_loadu_ps(out + i)));
    for (; i < d; ++i) out[i] += w * WidenScalar<D>(v[i]);
  }
};

struct Avx512Ops {
  template <KvCacheDtype D>
  INFERA_AVX512 static __m512 Load16(const Elem<D>* p) {
    if constexpr (D == KvCacheDtype::kFloat32) {
      return _mm512_loadu_ps(p);
    } else {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      // maskz with a full mask: the unmasked intrinsics trip g++ 12's
      // -Wmaybe-uninitialized in its own header (same instructions).
      if constexpr (D == KvCacheDtype::kFloat16) return _mm512_maskz_cvtph_ps(0xffff, h);
      return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
    }
  }
  template <KvCacheDtype D>
  INFERA_AVX512 static float Dot(const float* q, const Elem<D>* k, int64_t d) {
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= d; i += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), Load16<D>(k + i), acc);
    const __m256 half = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, _mm512_castps_pd(acc), 0)),
                                      _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, _mm512_castps_pd(acc), 1)));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    float dot = _mm_cvtss_f32(s);
    for (; i < d; ++i) dot += q[i] * WidenScalar<D>(k[i]);
    return dot;
  }
  template <KvCacheDtype D>
  INFERA_AVX512 static void Axpy(float w, const Elem<D>* v, int64_t d, float* out) {
    const __m512 wv = _mm512_set1_ps(w);
    int64_t i = 0;
    for (; i + 16 <= d; i += 16) {
      _mm512_storeu_ps(out + i, _mm512_fmadd_ps(wv, Load16<D>(v + i), _mm512_loadu_ps(out + i)));
    }
    for (; i < d; ++i) out[i] += w * WidenScalar<D>(v[i]);
  }
};

template <class Ops, KvCacheDtype D>
inline void AttentionBody(const float* q, const void* k_cache, const void* v_cache, const int32_t* block_table,
                          int64_t context_len, int64_t kv_head, const PagedKvLayout& layout, float scale,
                          float* scratch, float* out, const AttentionVariant& variant) {
  const Elem<D>* kc = static_cast<const Elem<D>*>(k_cache);
  const Elem<D>* vc = static_cast<const Elem<D>*>(v_cache);
  const int64_t d = layout.head_dim;
  const int64_t bs = layout.block_size;
  const int64_t stride = layout.SlotStride();
  const int64_t first = std::clamp<int64_t>(variant.window_start, 0, context_len - 1);
  const float cap = variant.logit_softcap;
  float max_score = -INFINITY;
  for (int64_t p = first; p < context_len; ++p) {
    const int64_t slot = static_cast<int64_t>(block_table[p / bs]) * bs + p % bs;
    float score = Ops::template Dot<D>(q, kc + slot * stride + kv_head * d, d) * scale;
    if (cap > 0.0f) score = cap * std::tanh(score / cap);
    scratch[p] = score;
    max_score = std::max(max_score, score);
  }
  float denom = 0.0f;
  for (int64_t p = first; p < context_len; ++p) {
    scratch[p] = std::exp(scratch[p] - max_score);
    denom += scratch[p];
  }
  const float inv = 1.0f / denom;
  std::fill(out, out + d, 0.0f);
  for (int64_t p = first; p < context_len; ++p) {
    const int64_t slot = static_cast<int64_t>(block_table[p / bs]) * bs + p % bs;
    Ops::template Axpy<D>(scratch[p] * inv, vc + slot * stride + kv_head * d, d, out);
  }
}

using AttentionFn = void (*)(const float*, const void*, const void*, const int32_t*, int64_t, int64_t,
                             const PagedKvLayout&, float, float*, float*, const AttentionVariant&);

template <KvCacheDtype D>
__attribute__((flatten)) void AttentionPortable(const float* q, const void* k, const void* v, const int32_t* bt,
                                                int64_t n, int64_t h, const PagedKvLayout& l, float s, float* sc,
                                                float* o, const AttentionVariant& var) {
  AttentionBody<PortableOps, D>(q, k, v, bt, n, h, l, s, sc, o, var);
}
template <KvCacheDtype D>
INFERA_AVX2 __attribute__((flatten)) void AttentionAvx2(const float* q, const void* k, const void* v,
                                                        const int32_t* bt, int64_t n, int64_t h,
                                                        const PagedKvLayout& l, float s, float* sc, float* o,
                                                        const AttentionVariant& var) {
  AttentionBody<Avx2Ops, D>(q, k, v, bt, n, h, l, s, sc, o, var);
}
template <KvCacheDtype D>
INFERA_AVX512 __attribute__((flatten)) void AttentionAvx512(const float* q, const void* k, const void* v,
                                                            const int32_t* bt, int64_t n, int64_t h,
                                                            const PagedKvLayout& l, float s, float* sc, float* o,
                                                            const AttentionVariant& var) {
  AttentionBody<Avx512Ops, D>(q, k, v, bt, n, h, l, s, sc, o, var);
}

// [isa][dtype], in the enums' order.
constexpr AttentionFn kAttention[3][3] = {
    {AttentionPortable<KvCacheDtype::kFloat32>, AttentionPortable<KvCacheDtype::kBFloat16>,
     AttentionPortable<KvCacheDtype::kFloat16>},
    {AttentionAvx2<KvCacheDtype::kFloat32>, AttentionAvx2<KvCacheDtype::kBFloat16>,
     AttentionAvx2<KvCacheDtype::kFloat16>},
    {AttentionAvx512<KvCacheDtype::kFloat32>, AttentionAvx512<KvCacheDtype::kBFloat16>,
     AttentionAvx512<KvCacheDtype::kFloat16>},
};

}  // namespace

const char* KvKernelIsaName(KvKernelIsa isa) {
  switch (isa) {
    case KvKernelIsa::kPortable: return "portable";
    case KvKernelIsa::kAvx2: return "avx2+f16c";
    case KvKernelIsa::kAvx512: return "avx512f";
  }
  return "?";
}

bool KvKernelIsaSupported(KvKernelIsa isa) {
  switch (isa) {
    case KvKernelIsa::kPortable: return true;
    case KvKernelIsa::kAvx2:
      return CpuHasAvx2Fma() && CpuHasF16c();
    case KvKernelIsa::kAvx512: return CpuHasAvx512f();
  }
  return false;
}

KvKernelIsa BestKvKernelIsa() {
  static const KvKernelIsa best = KvKernelIsaSupported(KvKernelIsa::kAvx512) ? KvKernelIsa::kAvx512
                                  : KvKernelIsaSupported(KvKernelIsa::kAvx2) ? KvKernelIsa::kAvx2
                                                                             : KvKernelIsa::kPortable;
  return best;
}

void StoreKvRow(const float* src, int64_t n, KvCacheDtype dtype, void* dst) {
  switch (dtype) {
    case KvCacheDtype::kFloat32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case KvCacheDtype::kBFloat16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = FloatToBf16(src[i]);
      return;
    }
    case KvCacheDtype::kFloat16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = FloatToHalf(src[i]);
      return;
    }
  }
}

void PagedAttentionHeadOn(KvKernelIsa isa, const float* q, const void* k_cache, const void* v_cache,
                          KvCacheDtype dtype, const int32_t* block_table, int64_t context_len, int64_t kv_head,
                          const PagedKvLayout& layout, float scale, float* scratch, float* out,
                          const AttentionVariant& variant) {
  kAttention[static_cast<int>(isa)][static_cast<int>(dtype)](q, k_cache, v_cache, block_table, context_len, kv_head,
                                                             layout, scale, scratch, out, variant);
}

void PagedAttentionHead(const float* q, const void* k_cache, const void* v_cache, KvCacheDtype dtype,
                        const int32_t* block_table, int64_t context_len, int64_t kv_head,
                        const PagedKvLayout& layout, float scale, float* scratch, float* out,
                        const AttentionVariant& variant) {
  PagedAttentionHeadOn(BestKvKernelIsa(), q, k_cache, v_cache, dtype, block_table, context_len, kv_head, layout,
                       scale, scratch, out, variant);
}

}  // namespace infera::llm
