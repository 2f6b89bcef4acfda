// The AVX-512 VNNI kernel: 64 codes × 64 int8 activations per vpdpbusd, 16 float lanes per
// zmm. Everything here is compiled for AVX-512F/BW/VL + VNNI (the pragma below) and only
// called after BlockKernelSupported(kAvx512Vnni); all helpers have internal linkage, so
// no copy built for this instruction set can stand in for another file's.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "quant/block_matmul_kernels.h"
#include "quant/dequantize.h"

#pragma GCC push_options
// GCC 12 flags the undefined upper half of _mm512_castsi256_si512 (and, once the row
// loops are unrolled, the undefined pass-through of _mm512_extractf64x4_pd) as
// (maybe-)uninitialised.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
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

inline CodeVec BiasQ8(CodeVec u) { return _mm512_xor_si512(u, _mm512_set1_epi8(static_cast<char>(0x80))); }
inline IVec IZero() { return _mm512_setzero_si512(); }
inline IVec ILoad(const int32_t* p) { return _mm512_loadu_si512(p); }
inline IVec IAdd(IVec a, IVec b) { return _mm512_add_epi32(a, b); }
inline IVec Dot(CodeVec u, const int8_t* x, IVec init) {
  return _mm512_dpbusd_epi32(init, u, _mm512_loadu_si512(x));
}
inline IVec DotSigned(CodeVec, const int8_t*, IVec init) { return init; }  // unused: kQ8Biased

inline FVec FZero() { return _mm512_setzero_ps(); }
inline FVec FLoad(const float* p) { return _mm512_loadu_ps(p); }
inline FVec FMul(FVec a, FVec b) { return _mm512_mul_ps(a, b); }
inline FVec FFma(FVec a, FVec b, FVec c) { return _mm512_fmadd_ps(a, b, c); }
inline FVec FSet1(float a) { return _mm512_set1_ps(a); }
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

// The 64 codes of chunk (blocks p0, p0 + kBytes; has1: whether the second exists, else
// its codes are 0) of a 32-element type, built from memory-operand broadcasts and
// per-qword shifts rather than 128/256-bit inserts: the shuffle port (p5) is what the
// decode loop runs out of first. Nibble types: qs of block 0 in 128-bit lanes 0, 1 and of
// block 1 in lanes 2, 3; lanes 1, 3 shifted right by 4 (the bits that cross into a byte's
// high nibble from the next byte are masked off with it).
template <BlockType T, int64_t kBytes>
inline CodeVec ChunkCodes32(const uint8_t* p0, bool has1) {
  if constexpr (T == BlockType::kQ8_0) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p0 + 2));
    const __m512i u = has1 ? _mm512_inserti64x4(_mm512_castsi256_si512(lo),
                                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p0 + kBytes + 2)), 1)
                           : _mm512_zextsi256_si512(lo);
    return BiasQ8(u);
  } else {
    constexpr int kQs = T == BlockType::kQ4_0 ? 2 : T == BlockType::kQ4_1 ? 4 : T == BlockType::kQ5_0 ? 6 : 8;
    __m512i v = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p0 + kQs)));
    v = has1 ? _mm512_mask_broadcast_i32x4(v, 0xFF00, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p0 + kBytes + kQs)))
             : _mm512_maskz_mov_epi32(0x00FF, v);
    __m512i u = _mm512_and_si512(_mm512_srlv_epi64(v, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)), _mm512_set1_epi8(15));
    if constexpr (T == BlockType::kQ5_0 || T == BlockType::kQ5_1) {
      constexpr int kQh = T == BlockType::kQ5_0 ? 2 : 4;  // bit e of the word → 0x10 in code e
      uint32_t h0, h1 = 0;
      std::memcpy(&h0, p0 + kQh, 4);
      if (has1) std::memcpy(&h1, p0 + kBytes + kQh, 4);
      const __mmask64 high = _cvtu64_mask64(static_cast<uint64_t>(h0) | static_cast<uint64_t>(h1) << 32);
      u = _mm512_mask_add_epi8(u, high, u, _mm512_set1_epi8(16));
    }
    return u;
  }
}

// The first half-word of each of 16 consecutive blocks of kBytes bytes (word kBytes/2 · i,
// i < 16), as two-table word permutes of plain loads: each permute picks the words that
// fall in one 64-word window of the blocks' bytes (kWindows[w].idx: word - 64w per lane;
// .lanes: the lanes it fills). Compile-time tables per block size.
template <int64_t kBytes>
struct SixteenHalves {
  static constexpr int kStride = static_cast<int>(kBytes / 2);  // words per block
  static constexpr int kLast = 15 * kStride;                    // block 15's word
  static constexpr int kLoads = kLast / 32 + 1;                 // 32 words per load
  static constexpr int kWindowCount = (kLoads + 1) / 2;
  struct Window {
    alignas(64) int16_t idx[32];
    uint32_t lanes;
  };
  static constexpr std::array<Window, kWindowCount> MakeWindows() {
    std::array<Window, kWindowCount> windows{};
    for (int w = 0; w < kWindowCount; ++w) {
      for (int i = 0; i < 16; ++i) {
        const int g = kStride * i - 64 * w;
        if (g >= 0 && g < 64) {
          windows[w].idx[i] = static_cast<int16_t>(g);
          windows[w].lanes |= 1u << i;
        }
      }
    }
    return windows;
  }
  static constexpr std::array<Window, kWindowCount> kWindows = MakeWindows();

  // Reads bytes [0, 2·kLast + 2) of `first` only: the last load is masked to the words up
  // to block 15's half, which lies inside the 16 blocks.
  static __m256i Load(const uint8_t* first) {
    __m512i t[2 * kWindowCount];
    for (int j = 0; j < kLoads - 1; ++j) t[j] = _mm512_loadu_si512(first + 64 * j);
    t[kLoads - 1] = _mm512_maskz_loadu_epi16(static_cast<__mmask32>((uint64_t{1} << (kLast % 32 + 1)) - 1),
                                             first + 64 * (kLoads - 1));
    if constexpr (kLoads % 2 == 1) t[kLoads] = _mm512_setzero_si512();
    __m512i r = _mm512_setzero_si512();
    for (int w = 0; w < kWindowCount; ++w) {
      const __m512i picked = _mm512_permutex2var_epi16(t[2 * w], _mm512_load_si512(kWindows[w].idx), t[2 * w + 1]);
      r = _mm512_mask_mov_epi16(r, kWindows[w].lanes, picked);
    }
    return _mm512_castsi512_si256(r);
  }
};

// The weights' half scales d of 16 consecutive blocks (8 chunks) as floats, converted with
// one instruction instead of two scalar conversions and broadcasts per chunk. Sixteen
// whole blocks (every chunk but a row's last few): SixteenHalves, a few loads and
// permutes; fewer: a masked gather. (The gather for all 16 took a fifth of the M = 1
// kernel's time on AMD Zen 4, where it is microcoded: docs/benchmarks.md, run P.)
// Products(dx, s): s[b] = d[b] · dx[b] for the 16 blocks (one multiply for a row of x's 8
// chunks); Pair(s, i) = (s[2i] in lanes 0..7, s[2i + 1] in lanes 8..15). Blocks beyond
// `count` read as 0 (a chunk's missing second block), dx is not read there.
struct BlockScales32 {
  alignas(64) float d[16];
  __mmask16 live;
  template <int64_t kBytes>
  void Load(const uint8_t* first, int64_t count) {
    if (count >= 16) {
      live = static_cast<__mmask16>(0xFFFF);
      _mm512_store_ps(d, _mm512_cvtph_ps(SixteenHalves<kBytes>::Load(first)));
      return;
    }
    const __m512i offsets = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                               _mm512_set1_epi32(static_cast<int>(kBytes)));
    live = static_cast<__mmask16>((1u << count) - 1);
    const __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, offsets, first, 1);
    _mm512_store_ps(d, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words)));
  }
  void Products(const float* dx, float* s) const {
    _mm512_store_ps(s, _mm512_mul_ps(_mm512_load_ps(d), _mm512_maskz_loadu_ps(live, dx)));
  }
  static FVec Pair(const float* s, int i) {
    return _mm512_mask_broadcastss_ps(_mm512_set1_ps(s[2 * i]), 0xFF00, _mm_load_ss(s + 2 * i + 1));
  }
};

// Chunk c of a K-quant block at p (block_matmul.h's codes u), from one 64-byte or
// broadcast 32-byte load and per-qword shifts (no 256-bit inserts).
template <BlockType T>
inline CodeVec ChunkCodesK(const uint8_t* p, int c) {
  const __m512i m4 = _mm512_set1_epi8(15);
  if constexpr (T == BlockType::kQ6_K) {
    // Low 4 bits: ql bytes 64·(c/2) .. +63, nibble c % 2; bits 4, 5: qh bytes 32·(c/2) ..
    // +31, bit pair 2·(c % 2) (elements 0..31 of the chunk) and 2·(c % 2) + 1 (32..63).
    const int half = c / 2, shift = 4 * (c % 2);
    const __m512i ql = _mm512_loadu_si512(p + 64 * half);
    const __m512i low = _mm512_and_si512(_mm512_srl_epi16(ql, _mm_cvtsi32_si128(shift)), m4);
    const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 128 + 32 * half)));
    const __m512i hs = _mm512_srlv_epi64(qh, _mm512_mask_set1_epi64(_mm512_set1_epi64(shift), 0xF0, shift + 2));
    return _mm512_ternarylogic_epi32(low, _mm512_slli_epi16(hs, 4), _mm512_set1_epi8(0x30), 0xF8);  // low | (hs<<4 & 0x30)
  } else {
    constexpr bool kFive = T == BlockType::kQ5_K;
    const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + (kFive ? 48 : 16) + 32 * c)));
    const __m512i u = _mm512_and_si512(_mm512_srlv_epi64(v, _mm512_setr_epi64(0, 0, 0, 0, 4, 4, 4, 4)), m4);
    if constexpr (!kFive) {
      return u;
    } else {
      // Bit 2c of qh byte e → 0x10 of code e, bit 2c + 1 → 0x10 of code 32 + e.
      const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16)));
      const __m512i hs = _mm512_srlv_epi64(qh, _mm512_mask_set1_epi64(_mm512_set1_epi64(2 * c), 0xF0, 2 * c + 1));
      return _mm512_ternarylogic_epi32(u, _mm512_slli_epi16(hs, 4), _mm512_set1_epi8(0x10), 0xF8);
    }
  }
}

// A K-quant block's sub-block scales, once per block: Chunk(c) = each lane's scale for
// chunk c, as the low 16 bits of the lane (high 16 bits 0) so that IMulScale can be one
// vpmaddwd; Q4_K/Q5_K: MinDot(sums) = Σ_s min[s] · sums[s].
template <BlockType T>
struct KScales {
  __m512i s;
  __m256i mins;
  void Load(const uint8_t* p) {
    if constexpr (T == BlockType::kQ6_K) {
      s = _mm512_and_si512(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 192))),
                           _mm512_set1_epi32(0xFFFF));
    } else {
      uint8_t sc[8], mn[8];
      UnpackKScalesMins(p + 4, sc, mn);
      uint64_t eight;
      std::memcpy(&eight, sc, 8);
      s = _mm512_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(eight)));
      std::memcpy(&eight, mn, 8);
      mins = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(eight)));
    }
  }
  int32_t MinDot(const int32_t* sums) const { return MinDot8(mins, sums); }
  IVec Chunk(int c) const {
    if constexpr (T == BlockType::kQ6_K) {  // 16-element sub-blocks 4c .. 4c + 3, four lanes each
      return _mm512_permutexvar_epi32(
          _mm512_add_epi32(_mm512_set1_epi32(4 * c), _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3)), s);
    } else {  // 32-element sub-blocks 2c, 2c + 1, eight lanes each
      return _mm512_permutexvar_epi32(_mm512_mask_set1_epi32(_mm512_set1_epi32(2 * c), 0xFF00, 2 * c + 1), s);
    }
  }
};
// v · scale per lane, exact: |v| < 2^15 (4 products of a code ≤ 63 in magnitude and
// |q| ≤ 127) and the scale a signed 16-bit value in the lane's low half, high half 0, so
// vpmaddwd's second product is 0 · (v's sign bits).
inline IVec IMulScale(IVec v, IVec scale) { return _mm512_madd_epi16(v, scale); }

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
