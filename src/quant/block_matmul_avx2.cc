// The AVX2 kernel: each 16-lane vector of block_matmul.h's math is two ymm halves (lanes
// 0..7, 8..15); integer lane sums by vpmaddubsw + vpmaddwd (no overflow: codes ≤ 63, or
// |Q8_0 code| ≤ 128 by the sign trick, times |q| ≤ 127, two per int16). Compiled for
// AVX2 + FMA + F16C (the pragma below) and only called after BlockKernelSupported(kAvx2);
// all helpers have internal linkage.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/block_matmul_kernels.h"
#include "quant/dequantize.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
// clang ignores GCC's target pragma (the fuzz and thread-safety builds use clang): the
// same features as a target attribute on every function defined below.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#endif

namespace infera::quant::block_matmul_internal {
namespace {

#include "quant/block_unpack_simd.h"

struct CodeVec {
  __m256i lo, hi;
};
struct IVec {
  __m256i lo, hi;
};
struct FVec {
  __m256 lo, hi;
};
// Q8_0 keeps its signed codes (DotSigned); the activations carry no bias.
constexpr bool kQ8Biased = false;

inline CodeVec Codes(__m256i lo, __m256i hi) { return {lo, hi}; }
inline CodeVec BiasQ8(CodeVec u) { return u; }
inline IVec IZero() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
inline IVec ILoad(const int32_t* p) {
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 8))};
}
inline IVec IAdd(IVec a, IVec b) { return {_mm256_add_epi32(a.lo, b.lo), _mm256_add_epi32(a.hi, b.hi)}; }
inline IVec IMul(IVec a, IVec b) { return {_mm256_mullo_epi32(a.lo, b.lo), _mm256_mullo_epi32(a.hi, b.hi)}; }
inline IVec ISet2(int a, int b) { return {_mm256_set1_epi32(a), _mm256_set1_epi32(b)}; }
inline IVec ISet4(const int8_t* s) {
  int32_t four;
  std::memcpy(&four, s, 4);
  const __m128i spread = _mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  const __m128i v = _mm_shuffle_epi8(_mm_cvtsi32_si128(four), spread);
  return {_mm256_cvtepi8_epi32(v), _mm256_cvtepi8_epi32(_mm_srli_si128(v, 8))};
}
inline __m256i Dot32(__m256i u, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1));
}
inline IVec Dot(CodeVec u, const int8_t* x, IVec init) {
  const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32));
  return {_mm256_add_epi32(init.lo, Dot32(u.lo, x0)), _mm256_add_epi32(init.hi, Dot32(u.hi, x1))};
}
// w · x = |w| · (x with w's sign): |w| ≤ 128 fits the unsigned operand.
inline IVec DotSigned(CodeVec w, const int8_t* x, IVec init) {
  const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32));
  return {_mm256_add_epi32(init.lo, Dot32(_mm256_abs_epi8(w.lo), _mm256_sign_epi8(x0, w.lo))),
          _mm256_add_epi32(init.hi, Dot32(_mm256_abs_epi8(w.hi), _mm256_sign_epi8(x1, w.hi)))};
}

inline FVec FZero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
inline FVec FLoad(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
inline FVec FMul(FVec a, FVec b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
inline FVec FFma(FVec a, FVec b, FVec c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
inline FVec FSet1(float a) { return {_mm256_set1_ps(a), _mm256_set1_ps(a)}; }
inline FVec FSet2(float a, float b) { return {_mm256_set1_ps(a), _mm256_set1_ps(b)}; }
inline FVec Cvt(IVec v) { return {_mm256_cvtepi32_ps(v.lo), _mm256_cvtepi32_ps(v.hi)}; }
inline float Reduce(FVec v) {
  const __m256 t8 = _mm256_add_ps(v.lo, v.hi);
  const __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(t8), _mm256_extractf128_ps(t8, 1));
  const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));
  return _mm_cvtss_f32(_mm_add_ss(t2, _mm_shuffle_ps(t2, t2, 1)));
}
inline __m256 WidenBf16(const uint8_t* q) {
  return _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))), 16));
}
template <BlockType T>
inline FVec LoadF(const uint8_t* p) {
  if constexpr (T == BlockType::kF32) {
    return FLoad(reinterpret_cast<const float*>(p));
  } else if constexpr (T == BlockType::kF16) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))};
  } else {
    return {WidenBf16(p), WidenBf16(p + 16)};
  }
}

// The 64 codes of a chunk of a 32-element type (blocks p0, p0 + kBytes; a missing second
// block has codes 0).
template <BlockType T, int64_t kBytes>
inline CodeVec ChunkCodes32(const uint8_t* p0, bool has1) {
  const CodeVec u = Codes(Codes32<T>(p0), has1 ? Codes32<T>(p0 + kBytes) : _mm256_setzero_si256());
  return T == BlockType::kQ8_0 ? BiasQ8(u) : u;
}
// The weights' scales of 16 consecutive blocks (8 chunks); Products(dx, s): s[b] = d[b] ·
// dx[b]; Pair(s, i) = (s[2i] in lanes 0..7, s[2i + 1] in lanes 8..15); blocks beyond
// `count` read as 0 (dx not read there).
struct BlockScales32 {
  alignas(64) float d[16];
  int64_t count = 0;
  template <int64_t kBytes>
  void Load(const uint8_t* first, int64_t n) {
    count = n;
    for (int64_t b = 0; b < 16; ++b) d[b] = b < count ? HalfAt(first + b * kBytes) : 0.0f;
  }
  void Products(const float* dx, float* s) const {
    for (int64_t b = 0; b < 16; ++b) s[b] = b < count ? d[b] * dx[b] : 0.0f;
  }
  static FVec Pair(const float* s, int i) { return FSet2(s[2 * i], s[2 * i + 1]); }
};
template <BlockType T>
inline CodeVec ChunkCodesK(const uint8_t* p, int c) {
  __m256i lo, hi;
  CodesK<T>(p, c, &lo, &hi);
  return Codes(lo, hi);
}
// A K-quant block's sub-block scales (Chunk(c): each lane's scale for chunk c) and, for
// Q4_K/Q5_K, MinDot(sums) = Σ_s min[s] · sums[s].
template <BlockType T>
struct KScales {
  const uint8_t* p6 = nullptr;
  uint8_t sc[8] = {};
  __m256i mins;  // set by Load (Q4_K/Q5_K)
  void Load(const uint8_t* p) {
    if constexpr (T == BlockType::kQ6_K) {
      p6 = p;
    } else {
      uint8_t mn[8];
      UnpackKScalesMins(p + 4, sc, mn);
      uint64_t eight;
      std::memcpy(&eight, mn, 8);
      mins = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(eight)));
    }
  }
  int32_t MinDot(const int32_t* sums) const { return MinDot8(mins, sums); }
  IVec Chunk(int c) const {
    if constexpr (T == BlockType::kQ6_K) {
      return ISet4(reinterpret_cast<const int8_t*>(p6 + 192 + 4 * c));
    } else {
      return ISet2(sc[2 * c], sc[2 * c + 1]);
    }
  }
};
inline IVec IMulScale(IVec v, IVec scale) { return IMul(v, scale); }

#include "quant/block_matmul_simd_body.h"

}  // namespace

void Avx2Columns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1) {
  AllColumns(a, w, y, ldy, c0, c1);
}

}  // namespace infera::quant::block_matmul_internal

#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
