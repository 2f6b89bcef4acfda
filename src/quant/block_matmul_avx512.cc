// The AVX-512 VNNI kernel: 64 codes × 64 int8 activations per vpdpbusd, 16 float lanes per
// zmm. Everything here is compiled for AVX-512F/BW/VL + VNNI (the pragma below) and only
// called after BlockKernelSupported(kAvx512Vnni); all helpers have internal linkage, so
// no copy built for this instruction set can stand in for another file's.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/block_matmul_kernels.h"
#include "quant/dequantize.h"

#pragma GCC push_options
// GCC 12 flags the undefined upper half of _mm512_castsi256_si512 as maybe-uninitialised.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")
// clang ignores GCC's target pragma (the fuzz and thread-safety builds use clang): the
// same features as a target attribute on every function defined below.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c"))), apply_to = function)
#endif

namespace infera::quant::block_matmul_internal {
namespace {

#include "quant/block_unpack_simd.h"

using CodeVec = __m512i;
using IVec = __m512i;
using FVec = __m512;
// Q8_0's signed codes become unsigned by +128; the activations' lane offsets
// (CodeBias = 128) take 128 · Σ q back out.
constexpr bool kQ8Biased = true;

inline CodeVec Codes(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
inline CodeVec BiasQ8(CodeVec u) { return _mm512_xor_si512(u, _mm512_set1_epi8(static_cast<char>(0x80))); }
inline IVec IZero() { return _mm512_setzero_si512(); }
inline IVec ILoad(const int32_t* p) { return _mm512_loadu_si512(p); }
inline IVec IAdd(IVec a, IVec b) { return _mm512_add_epi32(a, b); }
inline IVec IMul(IVec a, IVec b) { return _mm512_mullo_epi32(a, b); }
inline IVec ISet2(int a, int b) { return _mm512_inserti64x4(_mm512_set1_epi32(a), _mm256_set1_epi32(b), 1); }
inline IVec ISet4(const int8_t* s) {
  int32_t four;
  std::memcpy(&four, s, 4);
  const __m128i spread = _mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  return _mm512_cvtepi8_epi32(_mm_shuffle_epi8(_mm_cvtsi32_si128(four), spread));
}
inline IVec Dot(CodeVec u, const int8_t* x, IVec init) {
  return _mm512_dpbusd_epi32(init, u, _mm512_loadu_si512(x));
}
inline IVec DotSigned(CodeVec, const int8_t*, IVec init) { return init; }  // unused: kQ8Biased

inline FVec FZero() { return _mm512_setzero_ps(); }
inline FVec FLoad(const float* p) { return _mm512_loadu_ps(p); }
inline FVec FMul(FVec a, FVec b) { return _mm512_mul_ps(a, b); }
inline FVec FFma(FVec a, FVec b, FVec c) { return _mm512_fmadd_ps(a, b, c); }
inline FVec FSet1(float a) { return _mm512_set1_ps(a); }
inline FVec FSet2(float a, float b) {
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(a)), _mm256_castps_pd(_mm256_set1_ps(b)), 1));
}
inline FVec Cvt(IVec v) { return _mm512_cvtepi32_ps(v); }
inline float Reduce(FVec v) {
  const __m256 t8 = _mm256_add_ps(_mm512_castps512_ps256(v),
                                  _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  const __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(t8), _mm256_extractf128_ps(t8, 1));
  const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));
  return _mm_cvtss_f32(_mm_add_ss(t2, _mm_shuffle_ps(t2, t2, 1)));
}
template <BlockType T>
inline FVec LoadF(const uint8_t* p) {
  if constexpr (T == BlockType::kF32) return _mm512_loadu_ps(p);
  if constexpr (T == BlockType::kF16) return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
}

#include "quant/block_matmul_simd_body.h"

}  // namespace

void QuantizeRowAvx512(const float* x, int64_t k, int64_t act_block, int8_t* q, float* d) {
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  for (int64_t b = 0; b < k / act_block; ++b) {
    const float* xb = x + b * act_block;
    // max(|x|, amax) keeps amax for a NaN x, as std::max(amax, |x|) does.
    __m512 amax = _mm512_setzero_ps();
    for (int64_t e = 0; e < act_block; e += 16) amax = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(xb + e)), amax);
    const float db = _mm512_reduce_max_ps(amax) / 127.0f;
    const __m512 id = _mm512_set1_ps(db == 0.0f ? 0.0f : 1.0f / db);
    for (int64_t e = 0; e < act_block; e += 16) {
      __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_loadu_ps(xb + e), id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __mmask16 nan = _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q);
      r = _mm512_maskz_mov_ps(static_cast<__mmask16>(~nan), _mm512_min_ps(_mm512_max_ps(r, lo), hi));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + b * act_block + e), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(r)));
    }
    d[b] = db;
  }
}

void Avx512VnniColumns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0,
                       int64_t c1) {
  AllColumns(a, w, y, ldy, c0, c1);
}

}  // namespace infera::quant::block_matmul_internal

#pragma GCC diagnostic pop
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
