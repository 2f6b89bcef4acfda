// The AMX kernel's block-sums path below one tile of rows (block_matmul.h: Q8_0 and Q4_0,
// 2 ≤ M < 16, the batched decode steps), in AVX-512 VNNI: the 16 float lanes of a vector
// are 16 output columns (weight rows), not 16 places along K as on the lanes path.
//
// Per panel of 16 weight rows and per 32-element block: the 16 rows' codes are transposed
// in registers into 8 vectors, vector g holding in lane l the 4 codes 4g .. 4g+3 of weight
// row l (Q4_0: low nibbles give elements 0..15, high nibbles 16..31). Then for each row i
// of x, 8 vpdpbusd with the row's 4 activation bytes broadcast from memory give the 16
// exact block sums at once, starting from −c · Σ q (offset_tiles: the codes are unsigned,
// u = w_int + c); one convert and one fma apply d_w · d_x. That is the block-sums contract
// operation for operation: acc = fma(d_w(b) · d_x(b), float(I_b), acc), blocks in order.
//
// Why: on the lanes path every row pays a convert, a scale broadcast and an fma per 64
// codes; here they are paid per 512 products, and the transposition (8 loads, 24
// shuffles) once per block for all M rows: at M = 8, 8192×2048, data in cache, 2.0× (Q8_0)
// and 2.5× (Q4_0) the lanes kernel (docs/quant_kernels.md). The 16 rows are read as 16
// streams, so the next panel (16 contiguous rows) is prefetched while this one runs.
//
// Compiled for AVX-512F/BW + VNNI; called only from BlockMatmul when the AMX kernel (which
// implies them) is chosen. Internal linkage for every helper, as in the other kernel files.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "quant/block_matmul_kernels.h"

#pragma GCC push_options
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c"))), apply_to = function)
#endif

namespace infera::quant::block_matmul_internal {
namespace {

// The transposition leaves weight row kLaneRow[p] in lane p (128-bit lanes 1 and 2 of the
// natural order swapped); the scales are gathered in the same order and each output row
// is put back in natural order once, at the store.
constexpr int32_t kLaneRow[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};

template <BlockType T>
constexpr int64_t kBlockBytes = T == BlockType::kQ8_0 ? 34 : 18;

// Block b of the 16 weight rows at p (row stride `stride`) as 8 vectors of unsigned codes
// (lane p: weight row kLaneRow[p]; vector g: its elements 4g .. 4g+3).
template <BlockType T>
inline void TransposeBlock(const uint8_t* p, int64_t stride, __m512i v[8]) {
  if constexpr (T == BlockType::kQ8_0) {
    // z[l] = row l's 32 codes | row l + 8's; an 8×8 dword transpose within each 256-bit half.
    __m512i z[8];
    for (int l = 0; l < 8; ++l) {
      z[l] = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 + l * stride))),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 + (l + 8) * stride)), 1);
    }
    __m512i s1[8], s2[8];
    for (int l = 0; l < 8; l += 2) {
      s1[l] = _mm512_unpacklo_epi32(z[l], z[l + 1]);
      s1[l + 1] = _mm512_unpackhi_epi32(z[l], z[l + 1]);
    }
    // s2[g] (rows 0..3 | 8..11) and s2[4 + g] (rows 4..7 | 12..15): 128-bit lane 0 holds
    // dword g of the first four rows, lane 1 dword g + 4, lanes 2 and 3 the same for the
    // second four.
    s2[0] = _mm512_unpacklo_epi64(s1[0], s1[2]);
    s2[1] = _mm512_unpackhi_epi64(s1[0], s1[2]);
    s2[2] = _mm512_unpacklo_epi64(s1[1], s1[3]);
    s2[3] = _mm512_unpackhi_epi64(s1[1], s1[3]);
    s2[4] = _mm512_unpacklo_epi64(s1[4], s1[6]);
    s2[5] = _mm512_unpackhi_epi64(s1[4], s1[6]);
    s2[6] = _mm512_unpacklo_epi64(s1[5], s1[7]);
    s2[7] = _mm512_unpackhi_epi64(s1[5], s1[7]);
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // signed q → u = q + 128
    for (int g = 0; g < 4; ++g) {
      v[g] = _mm512_xor_si512(_mm512_shuffle_i32x4(s2[g], s2[4 + g], 0x88), flip);
      v[g + 4] = _mm512_xor_si512(_mm512_shuffle_i32x4(s2[g], s2[4 + g], 0xDD), flip);
    }
  } else {
    // z[a]'s 128-bit lane i = the 16 bytes of row kLaneRow[4i + a]; a 4×4 dword transpose
    // within each 128-bit lane puts dword g of row kLaneRow[p] in lane p of d[g].
    __m512i z[4];
    for (int a = 0; a < 4; ++a) {
      __m512i t = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 + kLaneRow[a] * stride)));
      for (int i = 1; i < 4; ++i) {
        const __m128i row = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 + kLaneRow[4 * i + a] * stride));
        t = i == 1 ? _mm512_inserti32x4(t, row, 1) : i == 2 ? _mm512_inserti32x4(t, row, 2) : _mm512_inserti32x4(t, row, 3);
      }
      z[a] = t;
    }
    const __m512i t0 = _mm512_unpacklo_epi32(z[0], z[1]), t1 = _mm512_unpackhi_epi32(z[0], z[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(z[2], z[3]), t3 = _mm512_unpackhi_epi32(z[2], z[3]);
    const __m512i d[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2), _mm512_unpacklo_epi64(t1, t3),
                          _mm512_unpackhi_epi64(t1, t3)};
    const __m512i m4 = _mm512_set1_epi8(15);
    for (int g = 0; g < 4; ++g) {
      v[g] = _mm512_and_si512(d[g], m4);                             // elements 4g .. 4g+3
      v[g + 4] = _mm512_and_si512(_mm512_srli_epi16(d[g], 4), m4);   // elements 16 + 4g ..
    }
  }
}

// y rows 0 .. R−1, columns j0 .. j0 + cols of the panel whose 16 weight rows start at p
// (row stride `stride`; rows past `cols` are readable zeros). `next`: the following
// panel's first byte, prefetched a block's share at a time, or null.
template <BlockType T, int R>
void Panel(const QuantizedActivations& a, const uint8_t* p, int64_t stride, const uint8_t* next, float* y,
           int64_t ldy, int64_t j0, int cols) {
  constexpr int64_t kBytes = kBlockBytes<T>;
  const int64_t blocks = a.k / 32;
  const __m512i scale_offsets =
      _mm512_mullo_epi32(_mm512_loadu_si512(kLaneRow), _mm512_set1_epi32(static_cast<int32_t>(stride)));
  __m512 acc[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = p + b * kBytes;
    if (next != nullptr) {  // 16 rows of the next panel are 16 · kBytes bytes per block
      const char* ahead = reinterpret_cast<const char*>(next + b * 16 * kBytes);
      for (int64_t o = 0; o < 16 * kBytes; o += 64) _mm_prefetch(ahead + o, _MM_HINT_T0);
    }
    // The 16 half scales d_w (the first 2 bytes of each row's block) as floats.
    const __m512 dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_i32gather_epi32(scale_offsets, block, 1)));
    __m512i v[8];
    TransposeBlock<T>(block, stride, v);
    const int8_t* q = a.q_tiles.data() + b * 8 * 64;    // quad 8b + g of row i at q + 64g + 4i
    const float* dx = a.d_tiles.data() + b * 16;         // row i's d_x at dx[i]
    const int32_t* off = a.offset_tiles.data() + b * 16;  // row i's −c · Σ q at off[i]
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      __m512i sums = _mm512_set1_epi32(off[r]);
#pragma GCC unroll 8
      for (int g = 0; g < 8; ++g) {
        int32_t quad;
        std::memcpy(&quad, q + 64 * g + 4 * r, 4);
        sums = _mm512_dpbusd_epi32(sums, v[g], _mm512_set1_epi32(quad));
      }
      acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(dx[r])), _mm512_cvtepi32_ps(sums), acc[r]);
    }
  }
  const __m512i natural = _mm512_loadu_si512(kLaneRow);  // kLaneRow is its own inverse
  const __mmask16 live = cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ldy + j0, live, _mm512_permutexvar_ps(natural, acc[r]));
}

template <BlockType T, int R>
void PanelsOf(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1) {
  const int64_t stride = w.row_bytes();
  for (int64_t j0 = c0; j0 < c1; j0 += 16) {
    const int cols = static_cast<int>(std::min<int64_t>(16, c1 - j0));
    if (cols == 16) {
      const uint8_t* next = j0 + 32 <= c1 ? w.row(j0 + 16) : nullptr;
      Panel<T, R>(a, w.row(j0), stride, next, y, ldy, j0, 16);
    } else {
      // The last, partial panel: its rows copied in front of zero rows, so that the 16
      // loads of a block stay inside memory this thread owns.
      thread_local std::vector<uint8_t> padded;
      padded.assign(static_cast<size_t>(16 * stride), 0);
      std::memcpy(padded.data(), w.row(j0), static_cast<size_t>(cols * stride));
      Panel<T, R>(a, padded.data(), stride, nullptr, y, ldy, j0, cols);
    }
  }
}

template <BlockType T, int R = 1>
void Dispatch(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1) {
  if constexpr (R < 16) {
    if (a.m == R) return PanelsOf<T, R>(a, w, y, ldy, c0, c1);
    return Dispatch<T, R + 1>(a, w, y, ldy, c0, c1);
  }
}

}  // namespace

void ColumnsAvx512(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0,
                   int64_t c1) {
  if (w.type() == BlockType::kQ8_0) return Dispatch<BlockType::kQ8_0>(a, w, y, ldy, c0, c1);
  if (w.type() == BlockType::kQ4_0) return Dispatch<BlockType::kQ4_0>(a, w, y, ldy, c0, c1);
}

}  // namespace infera::quant::block_matmul_internal

#pragma GCC diagnostic pop
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
