#include "llm/packed_matmul.h"

#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "api/float16.h"
#include "common/cpu_features.h"
#include "llm/cpu_kernels.h"  // HalfToFloatInline
#include "llm/packed_layout.h"

// Built with -O3 (see CMakeLists.txt). The AVX-512 kernel is intrinsics in functions
// with target("avx512f"); the portable kernel is plain loops, built for AVX2 + FMA and
// for baseline x86-64 (see "portable" below).

namespace infera::llm {
namespace {

constexpr int64_t kW = PackedMatrix::kPanelWidth;
constexpr int kMaxTileRows = 6;  // 6 rows × 4 zmm = 24 accumulators of 32 registers
// Rows per block when M is large (prefill): the x block (48 × K floats) and one panel
// stay in L2 while the tiles of the block run over that panel.
constexpr int64_t kRowBlock = 48;
constexpr int64_t kInt4Group = PackedMatrix::kInt4Group;
using packed_layout::Bf16Slot;
using packed_layout::kInt4GroupBytes;

// The number of row tiles for `rows` rows, and the rows of tile t (as even as possible:
// 8 rows → 4 + 4, 16 → 6 + 5 + 5).
int64_t NumTiles(int64_t rows) { return (rows + kMaxTileRows - 1) / kMaxTileRows; }
int64_t TileRows(int64_t rows, int64_t tiles, int64_t t) { return rows / tiles + (t < rows % tiles ? 1 : 0); }

// ------------------------------------------------------------------------------ AVX-512

#define INFERA_AVX512 __attribute__((target("avx512f")))

// acc[R rows][64] (row stride 64 floats) = x[R rows][0..k) · panel[0..k)[64]; the
// accumulators live in registers for the whole k loop.
template <int R>
INFERA_AVX512 inline void FmaRows(const float* x, int64_t ldx, int64_t kk, const __m512* w, __m512 (*acc)[4]) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512 xv = _mm512_set1_ps(x[r * ldx + kk]);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_fmadd_ps(xv, w[j], acc[r][j]);
  }
}

template <int R, PackedType T>
INFERA_AVX512 void TileAvx512(const float* x, int64_t ldx, const void* panel, int64_t k, float* acc_out) {
  __m512 acc[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  if constexpr (T == PackedType::kInt4) {
    // Per group: its 64 fp16 scales d, then w = u·d − 8d (exact: (u − 8)·d fits fp32).
    // The maskz forms with a full mask (here and below) are the plain instructions; the
    // unmasked intrinsics trip g++ 12's -Wmaybe-uninitialized in its own header.
    const unsigned char* base = static_cast<const unsigned char*>(panel);
    const __m512i low4 = _mm512_set1_epi32(0xf);
    for (int64_t g0 = 0; g0 < k; g0 += kInt4Group, base += kInt4GroupBytes) {
      const int64_t rows = std::min(kInt4Group, k - g0);
      __m512 d[4], nd[4];
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        d[j] = _mm512_maskz_cvtph_ps(0xffff, _mm256_load_si256(
            reinterpret_cast<const __m256i*>(base + kInt4Group * (kW / 2) + 32 * j)));
        nd[j] = _mm512_mul_ps(d[j], _mm512_set1_ps(-8.0f));
      }
      for (int64_t i = 0; i < rows; ++i) {
        const unsigned char* row = base + i * (kW / 2);
        const __m512i e0 = _mm512_maskz_cvtepu8_epi32(0xffff, _mm_load_si128(reinterpret_cast<const __m128i*>(row)));
        const __m512i e1 = _mm512_maskz_cvtepu8_epi32(0xffff, _mm_load_si128(reinterpret_cast<const __m128i*>(row + 16)));
        __m512 w[4];
        w[0] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_and_si512(e0, low4)), d[0], nd[0]);
        w[1] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_and_si512(e1, low4)), d[1], nd[1]);
        w[2] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_maskz_srli_epi32(0xffff, e0, 4)), d[2], nd[2]);
        w[3] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_maskz_srli_epi32(0xffff, e1, 4)), d[3], nd[3]);
        FmaRows<R>(x, ldx, g0 + i, w, acc);
      }
    }
  } else {
    for (int64_t kk = 0; kk < k; ++kk) {
      __m512 w[4];
      if constexpr (T == PackedType::kBF16) {
        const uint16_t* wp = static_cast<const uint16_t*>(panel) + kk * kW;
        const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
        const __m512i a = _mm512_load_si512(wp), b = _mm512_load_si512(wp + 32);
        // maskz with a full mask: the unmasked intrinsic trips g++ 12's -Wmaybe-uninitialized
        // in its own header (same instruction).
        w[0] = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, a, 16));
        w[1] = _mm512_castsi512_ps(_mm512_and_si512(a, high));
        w[2] = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, b, 16));
        w[3] = _mm512_castsi512_ps(_mm512_and_si512(b, high));
      } else if constexpr (T == PackedType::kInt8) {
        const int8_t* wp = static_cast<const int8_t*>(panel) + kk * kW;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          w[j] = _mm512_maskz_cvtepi32_ps(0xffff, 
              _mm512_maskz_cvtepi8_epi32(0xffff, _mm_load_si128(reinterpret_cast<const __m128i*>(wp + 16 * j))));
        }
      } else {
        const float* wp = static_cast<const float*>(panel) + kk * kW;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) w[j] = _mm512_load_ps(wp + 16 * j);
      }
      FmaRows<R>(x, ldx, kk, w, acc);
    }
  }
  if constexpr (T == PackedType::kInt8) {
    // The per-column scales follow the K rows: y = scale · Σ x·q.
    const float* scale = reinterpret_cast<const float*>(static_cast<const int8_t*>(panel) + k * kW);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512 sv = _mm512_load_ps(scale + 16 * j);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[r][j] = _mm512_mul_ps(acc[r][j], sv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) _mm512_store_ps(acc_out + r * kW + 16 * j, acc[r][j]);
  }
}

template <PackedType T>
INFERA_AVX512 void TileAvx512Rows(int64_t rows, const float* x, int64_t ldx, const void* panel, int64_t k,
                                  float* acc) {
  switch (rows) {
    case 1: return TileAvx512<1, T>(x, ldx, panel, k, acc);
    case 2: return TileAvx512<2, T>(x, ldx, panel, k, acc);
    case 3: return TileAvx512<3, T>(x, ldx, panel, k, acc);
    case 4: return TileAvx512<4, T>(x, ldx, panel, k, acc);
    case 5: return TileAvx512<5, T>(x, ldx, panel, k, acc);
    default: return TileAvx512<6, T>(x, ldx, panel, k, acc);
  }
}

// y rows (+)= acc rows (+ bias) for the valid columns of one panel.
INFERA_AVX512 void StoreAvx512(const float* acc, int64_t rows, const float* bias, float* y, int64_t ldy,
                               bool accumulate, int64_t cols) {
  __mmask16 mask[4];
  for (int j = 0; j < 4; ++j) {
    const int64_t lanes = std::clamp<int64_t>(cols - 16 * j, 0, 16);
    mask[j] = static_cast<__mmask16>((1u << lanes) - 1u);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* out = y + r * ldy;
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m512 v = _mm512_load_ps(acc + r * kW + 16 * j);
      if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[j], bias + 16 * j));
      if (accumulate) v = _mm512_add_ps(_mm512_maskz_loadu_ps(mask[j], out + 16 * j), v);
      _mm512_mask_storeu_ps(out + 16 * j, mask[j], v);
    }
  }
}

template <PackedType T>
INFERA_AVX512 void MatmulAvx512(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias,
                                float* y, int64_t ldy, bool accumulate, int64_t p0, int64_t p1) {
  // Tiles accumulate over the whole K of a panel (measured: splitting K into L1-sized
  // chunks, to interleave the panel's memory stream with every tile, was no faster).
  alignas(64) float acc[kRowBlock * kW];
  for (int64_t r0 = 0; r0 < m; r0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, m - r0), tiles = NumTiles(rows);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c0 = p * kW, cols = std::min(kW, w.n() - c0);
      int64_t i = 0;
      for (int64_t t = 0; t < tiles; ++t) {
        const int64_t r = TileRows(rows, tiles, t);
        TileAvx512Rows<T>(r, x + (r0 + i) * ldx, ldx, w.panel(p), w.k(), acc + i * kW);
        i += r;
      }
      StoreAvx512(acc, rows, bias ? bias + c0 : nullptr, y + r0 * ldy + c0, ldy, accumulate, cols);
    }
  }
}

// ------------------------------------------------------------------------------ portable
//
// One body (MatmulPortableBody, inline) compiled twice: MatmulAvx2 with target("avx2,fma")
// and MatmulBaseline for plain x86-64, both `flatten`, so the body and its helpers are
// inlined into code built for that ISA. The loops are written so that g++ contracts
// `acc += x·w` into one FMA on the AVX2 build (each build is self-consistent: a row's
// bits do not depend on M in either). That rests on the compiler's contraction and
// inlining, not on the source: packed_matmul_test checks it on the release build (gcc);
// clang's ASan build rounds some paths differently (docs/reliability.md).

#define INFERA_AVX2 __attribute__((target("avx2,fma")))

// Eight floats (GCC/clang vector extension): one ymm on AVX2, two xmm on baseline x86-64.
// `t += x * w` on it is contracted to one FMA on the AVX2 build (gcc), as the scalar loops are.
typedef float Vec8 __attribute__((vector_size(32)));

// The quantised path's m × 64 accumulators, one buffer per thread (grown, never shrunk).
// Out of line (noinline) so that `flatten` does not pull std::vector into the kernels.
__attribute__((noinline)) float* QuantisedAccBuffer(int64_t floats) {
  thread_local std::vector<float> acc;
  if (acc.size() < static_cast<size_t>(floats)) acc.resize(static_cast<size_t>(floats));
  return acc.data();
}

// Quantised panels: blocks of 32 K rows are dequantised once into a float buffer
// (int8: q as float, the column scale applied after the k loop; int4: (u − 8)·d, exact in
// fp32 and equal to the AVX-512 kernel's values), then every row of x runs over the
// buffer: the dequantisation is shared by all M rows, as the AVX-512 kernel shares it
// by a tile. `acc` holds m × 64 accumulators. Each output is still one sum over k in
// increasing order, independent of the other rows.
template <bool kRegisterRow>
inline void QuantisedPanelPortable(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, int64_t p, float* acc) {
  const bool int4 = w.type() == PackedType::kInt4;
  const int64_t k = w.k();
  const unsigned char* base = static_cast<const unsigned char*>(w.panel(p));
  alignas(64) float block[kInt4Group][kW];
  std::fill(acc, acc + m * kW, 0.0f);
  for (int64_t g0 = 0; g0 < k; g0 += kInt4Group) {
    const int64_t rows = std::min(kInt4Group, k - g0);
    if (int4) {
      const unsigned char* group = base + (g0 / kInt4Group) * kInt4GroupBytes;
      float d[kW];
      for (int64_t c = 0; c < kW; ++c) {
        uint16_t h;
        std::memcpy(&h, group + kInt4Group * (kW / 2) + 2 * c, 2);
        d[c] = HalfToFloatInline(h);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const unsigned char* row = group + r * (kW / 2);
#pragma omp simd
        for (int64_t b = 0; b < kW / 2; ++b) {
          block[r][b] = static_cast<float>(static_cast<int>(row[b] & 0xf) - 8) * d[b];
          block[r][b + kW / 2] = static_cast<float>(static_cast<int>(row[b] >> 4) - 8) * d[b + kW / 2];
        }
      }
    } else {
      const int8_t* q = reinterpret_cast<const int8_t*>(base) + g0 * kW;
      for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
        for (int64_t c = 0; c < kW; ++c) block[r][c] = static_cast<float>(q[r * kW + c]);
      }
    }
    // AVX2 build: a row's 64 accumulators stay in 8 ymm registers over the block's rows
    // (with them in memory the loop is load/store-bound: measured 1.7× slower at M = 8).
    // The baseline build has 16 xmm registers, too few for 16 accumulators, and keeps
    // the plain loop (the vector form measured 4× slower there). Same operations in the
    // same order either way.
    if constexpr (!kRegisterRow) {
      for (int64_t i = 0; i < m; ++i) {
        const float* xr = x + i * ldx + g0;
        float* a = acc + i * kW;
        for (int64_t r = 0; r < rows; ++r) {
          const float xv = xr[r];
#pragma omp simd
          for (int64_t c = 0; c < kW; ++c) a[c] += xv * block[r][c];
        }
      }
    } else {
      for (int64_t i = 0; i < m; ++i) {
        const float* xr = x + i * ldx + g0;
        float* a = acc + i * kW;
        Vec8 t[kW / 8];
#pragma GCC unroll 8
        for (int64_t j = 0; j < kW / 8; ++j) std::memcpy(&t[j], a + 8 * j, sizeof(Vec8));
        for (int64_t r = 0; r < rows; ++r) {
          const float s = xr[r];
          const Vec8 xv = {s, s, s, s, s, s, s, s};
#pragma GCC unroll 8
          for (int64_t j = 0; j < kW / 8; ++j) {
            Vec8 wv;
            std::memcpy(&wv, &block[r][8 * j], sizeof(Vec8));
            t[j] += xv * wv;
          }
        }
#pragma GCC unroll 8
        for (int64_t j = 0; j < kW / 8; ++j) std::memcpy(a + 8 * j, &t[j], sizeof(Vec8));
      }
    }
  }
  if (!int4) {
    float scale[kW];
    std::memcpy(scale, base + k * kW, sizeof(scale));
    for (int64_t i = 0; i < m; ++i) {
#pragma omp simd
      for (int64_t c = 0; c < kW; ++c) acc[i * kW + c] *= scale[c];
    }
  }
}

// One row at a time over a panel: 64 accumulators (8 ymm on AVX2), k in order. bf16
// accumulates in storage order and un-permutes at the end. Quantised types: M ≤ 2
// dequantise each k row into the FMA; more rows go through QuantisedPanelPortable. Both
// sum over k in increasing order with the same dequantised values, so a row's result
// does not depend on M.
template <bool kRegisterRow>
inline void MatmulPortableBody(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
                    int64_t ldy, bool accumulate, int64_t p0, int64_t p1) {
  const PackedType type = w.type();
  const int64_t k = w.k();
  if ((type == PackedType::kInt8 || type == PackedType::kInt4) && m <= 2) {
    // One or two rows: dequantising straight into the FMA (no buffer pass) is faster
    // (measured on the AVX2 build: 14 against 9 GB/s for int8 at M = 1).
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c0 = p * kW, cols = std::min(kW, w.n() - c0);
      const unsigned char* base = static_cast<const unsigned char*>(w.panel(p));
      for (int64_t i = 0; i < m; ++i) {
        const float* xr = x + i * ldx;
        float acc[kW] = {};
        if (type == PackedType::kInt8) {
          const int8_t* wp = reinterpret_cast<const int8_t*>(base);
          for (int64_t kk = 0; kk < k; ++kk) {
            const float xv = xr[kk];
            const int8_t* row = wp + kk * kW;
#pragma omp simd
            for (int64_t c = 0; c < kW; ++c) acc[c] += xv * static_cast<float>(row[c]);
          }
          float scale[kW];
          std::memcpy(scale, base + k * kW, sizeof(scale));
#pragma omp simd
          for (int64_t c = 0; c < kW; ++c) acc[c] *= scale[c];
        } else {
          for (int64_t g0 = 0; g0 < k; g0 += kInt4Group) {
            const unsigned char* group = base + (g0 / kInt4Group) * kInt4GroupBytes;
            const int64_t rows = std::min(kInt4Group, k - g0);
            float d[kW];
            for (int64_t c = 0; c < kW; ++c) {
              uint16_t h;
              std::memcpy(&h, group + kInt4Group * (kW / 2) + 2 * c, 2);
              d[c] = HalfToFloatInline(h);
            }
            for (int64_t r = 0; r < rows; ++r) {
              const float xv = xr[g0 + r];
              const unsigned char* row = group + r * (kW / 2);
              float wv[kW];
#pragma omp simd
              for (int64_t b = 0; b < kW / 2; ++b) {
                wv[b] = static_cast<float>(static_cast<int>(row[b] & 0xf) - 8) * d[b];
                wv[b + kW / 2] = static_cast<float>(static_cast<int>(row[b] >> 4) - 8) * d[b + kW / 2];
              }
#pragma omp simd
              for (int64_t c = 0; c < kW; ++c) acc[c] += xv * wv[c];
            }
          }
        }
        float* out = y + i * ldy + c0;
        for (int64_t c = 0; c < cols; ++c) {
          const float v = acc[c] + (bias ? bias[c0 + c] : 0.0f);
          out[c] = accumulate ? out[c] + v : v;
        }
      }
    }
    return;
  }
  if (type == PackedType::kInt8 || type == PackedType::kInt4) {
    float* acc = QuantisedAccBuffer(m * kW);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c0 = p * kW, cols = std::min(kW, w.n() - c0);
      QuantisedPanelPortable<kRegisterRow>(x, m, ldx, w, p, acc);
      for (int64_t i = 0; i < m; ++i) {
        float* out = y + i * ldy + c0;
        for (int64_t c = 0; c < cols; ++c) {
          const float v = acc[i * kW + c] + (bias ? bias[c0 + c] : 0.0f);
          out[c] = accumulate ? out[c] + v : v;
        }
      }
    }
    return;
  }
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t c0 = p * kW, cols = std::min(kW, w.n() - c0);
    for (int64_t i = 0; i < m; ++i) {
      const float* xr = x + i * ldx;
      float acc[kW] = {};
      if (type == PackedType::kBF16) {
        const uint16_t* wp = static_cast<const uint16_t*>(w.panel(p));
        for (int64_t kk = 0; kk < k; ++kk) {
          const float xv = xr[kk];
          const uint16_t* row = wp + kk * kW;
#pragma omp simd
          for (int64_t s = 0; s < kW; ++s) acc[s] += xv * BitsToFloat(static_cast<uint32_t>(row[s]) << 16);
        }
        float ordered[kW];
        for (int64_t c = 0; c < kW; ++c) ordered[c] = acc[Bf16Slot(c)];
        std::memcpy(acc, ordered, sizeof(acc));
      } else {
        const float* wp = static_cast<const float*>(w.panel(p));
        for (int64_t kk = 0; kk < k; ++kk) {
          const float xv = xr[kk];
          const float* row = wp + kk * kW;
#pragma omp simd
          for (int64_t c = 0; c < kW; ++c) acc[c] += xv * row[c];
        }
      }
      float* out = y + i * ldy + c0;
      for (int64_t c = 0; c < cols; ++c) {
        const float v = acc[c] + (bias ? bias[c0 + c] : 0.0f);
        out[c] = accumulate ? out[c] + v : v;
      }
    }
  }
}

INFERA_AVX2 __attribute__((flatten)) void MatmulAvx2(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w,
                                                    const float* bias, float* y, int64_t ldy, bool accumulate,
                                                    int64_t p0, int64_t p1) {
  MatmulPortableBody<true>(x, m, ldx, w, bias, y, ldy, accumulate, p0, p1);
}

__attribute__((flatten)) void MatmulBaseline(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w,
                                             const float* bias, float* y, int64_t ldy, bool accumulate, int64_t p0,
                                             int64_t p1) {
  MatmulPortableBody<false>(x, m, ldx, w, bias, y, ldy, accumulate, p0, p1);
}

}  // namespace

namespace packed_matmul_internal {

void Avx2(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y, int64_t ldy,
          bool accumulate, int64_t panel_begin, int64_t panel_end) {
  MatmulAvx2(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
}

void Avx512(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y, int64_t ldy,
            bool accumulate, int64_t panel_begin, int64_t panel_end) {
  switch (w.type()) {
    case PackedType::kBF16:
      return MatmulAvx512<PackedType::kBF16>(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
    case PackedType::kInt8:
      return MatmulAvx512<PackedType::kInt8>(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
    case PackedType::kInt4:
      return MatmulAvx512<PackedType::kInt4>(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
    case PackedType::kF32:
      return MatmulAvx512<PackedType::kF32>(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
  }
}

void Portable(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
              int64_t ldy, bool accumulate, int64_t panel_begin, int64_t panel_end) {
  MatmulBaseline(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
}

}  // namespace packed_matmul_internal

void PackedMatmul(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
                  int64_t ldy, bool accumulate, int64_t panel_begin, int64_t panel_end) {
  if (m <= 0 || panel_begin >= panel_end) return;
  if (CpuHasAvx512f()) {
    packed_matmul_internal::Avx512(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
  } else if (CpuHasAvx2Fma()) {
    packed_matmul_internal::Avx2(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
  } else {
    packed_matmul_internal::Portable(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
  }
}

const char* PackedMatmulIsa() {
  if (CpuHasAvx512f()) return "avx512f";
  return CpuHasAvx2Fma() ? "avx2+fma" : "portable";
}

}  // namespace infera::llm
