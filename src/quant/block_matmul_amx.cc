// The AMX kernel's block-sums path (block_matmul.h): prefill-sized M. Per call, for each
// panel of 16 weight rows (columns of y): unpack the panel once into signed int8 codes
// (16 × K, a thread_local scratch that stays in L1/L2) plus its scales; then for every
// tile of 16 activation rows, per 32-element group (Q6_K: 16), one TDPBSSD computes the
// exact int32 group sums of all 16 × 16 (weight row, activation row) pairs, and AVX-512
// applies the float scales in the contract's order. The weights are the A operand (rows =
// weight rows, as unpacked: no transpose); the activations the B operand, laid out for it
// once by QuantizeActivations (q_tiles). Compiled for AMX-TILE/INT8 + AVX-512 (pragma
// below), called only after BlockKernelSupported(kAmx); helpers have internal linkage.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "quant/block_matmul_kernels.h"
#include "quant/dequantize.h"

#pragma GCC push_options
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c"))), apply_to = function)
#endif

namespace infera::quant::block_matmul_internal {
namespace {

#include "quant/block_unpack_simd.h"

// GCC's tile intrinsics are inline asm that names no memory: this barrier orders the
// ordinary stores/loads of the scratch around the tile loads/stores.
inline void CompilerBarrier() { asm volatile("" ::: "memory"); }

struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

// tmm0..3: C, 16 weight rows × 16 activation rows of int32 (four groups in flight).
// tmm4, 5: A, 16 weight rows × `group` codes. tmm6, 7: B, group / 4 quads × (16
// activation rows × 4 codes).
void ConfigureTiles(int group) {
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.palette_id = 1;
  for (int t = 0; t < 4; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  for (int t = 4; t < 6; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = static_cast<uint16_t>(group);
    cfg.rows[t + 2] = static_cast<uint8_t>(group / 4);
    cfg.colsb[t + 2] = 64;
  }
  CompilerBarrier();
  _tile_loadconfig(&cfg);
}

template <BlockType T>
struct Layout {
  static constexpr bool kK = T == BlockType::kQ4_K || T == BlockType::kQ5_K || T == BlockType::kQ6_K;
  static constexpr int kGroup = T == BlockType::kQ6_K ? 16 : 32;      // elements per tile multiply
  static constexpr int kStep = T == BlockType::kQ6_K ? 16 : 8;        // groups per epilogue
  static constexpr bool kMin32 = T == BlockType::kQ4_1 || T == BlockType::kQ5_1;
  static constexpr bool kMinK = T == BlockType::kQ4_K || T == BlockType::kQ5_K;
  static constexpr int64_t kBytes = T == BlockType::kQ8_0   ? 34
                                    : T == BlockType::kQ4_0 ? 18
                                    : T == BlockType::kQ4_1 ? 20
                                    : T == BlockType::kQ5_0 ? 22
                                    : T == BlockType::kQ5_1 ? 24
                                    : T == BlockType::kQ4_K ? 144
                                    : T == BlockType::kQ5_K ? 176
                                                            : 210;
  // Subtracted from the unsigned codes u to give the contract's w_int.
  static constexpr int kBias = T == BlockType::kQ4_0 ? 8 : T == BlockType::kQ5_0 ? 16 : T == BlockType::kQ6_K ? 32 : 0;
};

// 16 weight rows unpacked: codes group-major — element e of row n at
// (e / G) · 16G + n · G + e mod G, so one group's A tile is 16G contiguous bytes — (w_int),
// and per row n the float scales (per
// block for the 32-element types, per super-block for the K-quants), the mins, and the
// K-quants' integer sub-block scales and mins.
struct Panel {
  std::vector<int8_t> codes;
  std::vector<float> d, m;       // d: [block][16] (32-element types), [row][super-block] (K);
                                 // m: Q4_1/Q5_1 min per block, Q4_K/Q5_K dmin per super-block ([row][...])
  std::vector<int32_t> sc, mn;   // K-quants: sub-block scales; Q4_K/Q5_K: sub-block mins
};

template <BlockType T>
void UnpackPanel(const BlockMatrix& w, int64_t j0, int cols, Panel* p) {
  using L = Layout<T>;
  const int64_t k = w.k(), blocks = L::kK ? k / 256 : k / 32, groups = k / L::kGroup;
  p->codes.resize(static_cast<size_t>(16 * k));
  p->d.assign(static_cast<size_t>(16 * blocks), 0.0f);
  p->m.assign(static_cast<size_t>(16 * blocks), 0.0f);
  p->sc.assign(static_cast<size_t>(16 * groups), 0);
  p->mn.assign(static_cast<size_t>(16 * (k / 32)), 0);
  const __m256i bias = _mm256_set1_epi8(static_cast<char>(L::kBias));
  constexpr int G = L::kGroup;
  int8_t* codes = p->codes.data();
  if (cols < 16) std::memset(codes, 0, p->codes.size());  // rows past the matrix: zero, not stored
  // 32 codes of row n starting at element e (a multiple of 32) into their group(s).
  auto put32 = [&](int n, int64_t e, __m256i v) {
    if constexpr (G == 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + (e / 32) * 512 + n * 32), v);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + (e / 16) * 256 + n * 16), _mm256_castsi256_si128(v));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + (e / 16 + 1) * 256 + n * 16), _mm256_extracti128_si256(v, 1));
    }
  };
  for (int n = 0; n < cols; ++n) {
    const uint8_t* row = w.row(j0 + n);
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* blk = row + b * L::kBytes;
      if constexpr (!L::kK) {
        __m256i u = Codes32<T>(blk);
        if constexpr (L::kBias != 0) u = _mm256_sub_epi8(u, bias);
        put32(n, 32 * b, u);
        p->d[b * 16 + n] = HalfAt(blk);
        if constexpr (L::kMin32) p->m[n * blocks + b] = HalfAt(blk + 2);
      } else {
        for (int c = 0; c < 4; ++c) {
          __m256i lo, hi;
          CodesK<T>(blk, c, &lo, &hi);
          if constexpr (L::kBias != 0) {
            lo = _mm256_sub_epi8(lo, bias);
            hi = _mm256_sub_epi8(hi, bias);
          }
          put32(n, 256 * b + 64 * c, lo);
          put32(n, 256 * b + 64 * c + 32, hi);
        }
        if constexpr (T == BlockType::kQ6_K) {
          p->d[n * blocks + b] = HalfAt(blk + 208);
          for (int s = 0; s < 16; ++s) p->sc[n * groups + 16 * b + s] = static_cast<int8_t>(blk[192 + s]);
        } else {
          p->d[n * blocks + b] = HalfAt(blk);
          p->m[n * blocks + b] = HalfAt(blk + 2);
          for (int s = 0; s < 8; ++s) {
            uint8_t sc, mn;
            UnpackKScaleMin(blk + 4, s, &sc, &mn);
            p->sc[n * groups + 8 * b + s] = sc;
            p->mn[n * (k / 32) + 8 * b + s] = mn;
          }
        }
      }
    }
  }
}

// y rows 16t .. 16t + rows, columns j0 .. j0 + cols from the unpacked panel.
template <BlockType T>
void PanelTimesTile(const QuantizedActivations& a, const Panel& p, int64_t t, int rows, int cols, float* y,
                    int64_t ldy, int64_t j0) {
  using L = Layout<T>;
  constexpr int G = L::kGroup;
  const int64_t k = a.k, groups = k / G, blocks = L::kK ? k / 256 : k / 32, subs = k / 32;
  const int8_t* bq = a.q_tiles.data() + t * 16 * k;
  const int8_t* codes = p.codes.data();
  // Two stages: the tile multiplies of step s + 1 run while AVX-512 scales step s.
  alignas(64) int32_t stage[2][L::kStep][16][16];  // [buffer][group of the step][weight row n][activation row i]
  alignas(64) float acc[16][16], accm[16][16];
  std::memset(acc, 0, sizeof acc);
  std::memset(accm, 0, sizeof accm);
  const float* dx_tile = a.d_tiles.data() + t * blocks * 16;
  const int64_t steps_total = (groups + L::kStep - 1) / L::kStep;
  // The exact sums of groups g0 .. g0 + count into out[0 .. count).
  auto issue = [&](int64_t g0, int32_t (*out)[16][16]) {
    const int count = static_cast<int>(std::min<int64_t>(L::kStep, groups - g0));
    const int8_t* a0 = codes + g0 * 16 * G;
    const int8_t* b0 = bq + g0 * G * 16;
    CompilerBarrier();
    int s = 0;
    for (; s + 4 <= count; s += 4) {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      _tile_loadd(4, a0 + s * 16 * G, G);
      _tile_loadd(6, b0 + s * G * 16, 64);
      _tile_dpbssd(0, 4, 6);
      _tile_loadd(5, a0 + (s + 1) * 16 * G, G);
      _tile_loadd(7, b0 + (s + 1) * G * 16, 64);
      _tile_dpbssd(1, 5, 7);
      _tile_loadd(4, a0 + (s + 2) * 16 * G, G);
      _tile_loadd(6, b0 + (s + 2) * G * 16, 64);
      _tile_dpbssd(2, 4, 6);
      _tile_loadd(5, a0 + (s + 3) * 16 * G, G);
      _tile_loadd(7, b0 + (s + 3) * G * 16, 64);
      _tile_dpbssd(3, 5, 7);
      _tile_stored(0, out[s], 64);
      _tile_stored(1, out[s + 1], 64);
      _tile_stored(2, out[s + 2], 64);
      _tile_stored(3, out[s + 3], 64);
    }
    for (; s < count; ++s) {
      _tile_zero(0);
      _tile_loadd(4, a0 + s * 16 * G, G);
      _tile_loadd(6, b0 + s * G * 16, 64);
      _tile_dpbssd(0, 4, 6);
      _tile_stored(0, out[s], 64);
    }
    CompilerBarrier();
  };
  __m512 va[16];  // the 32-element types' acc rows
  for (__m512& v : va) v = _mm512_setzero_ps();
  issue(0, stage[0]);
  for (int64_t step = 0; step < steps_total; ++step) {
    const int64_t g0 = step * L::kStep;
    if (step + 1 < steps_total) issue(g0 + L::kStep, stage[(step + 1) & 1]);
    int32_t (*st)[16][16] = stage[step & 1];
    const int steps = static_cast<int>(std::min<int64_t>(L::kStep, groups - g0));
    if constexpr (!L::kK) {
      // Block by block, the 16 weight rows' accumulators in registers (rows past the
      // matrix have zero codes and scales and are not stored).
      for (int s = 0; s < steps; ++s) {
        const int64_t b = g0 + s;
        const __m512 dx = _mm512_loadu_ps(dx_tile + b * 16);
        const float* dw = p.d.data() + b * 16;
#pragma GCC unroll 16
        for (int n = 0; n < 16; ++n) {
          const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(dw[n]), dx);
          va[n] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(_mm512_load_si512(st[s][n])), va[n]);
        }
      }
      if constexpr (L::kMin32) {
        for (int n = 0; n < cols; ++n) {
          __m512 vm = _mm512_load_ps(accm[n]);
          for (int s = 0; s < steps; ++s) {
            const int64_t b = g0 + s;
            const float* ds = a.dsum_tiles.data() + (t * subs + b) * 16;
            vm = _mm512_fmadd_ps(_mm512_set1_ps(p.m[n * blocks + b]), _mm512_loadu_ps(ds), vm);
          }
          _mm512_store_ps(accm[n], vm);
        }
      }
    } else {
      const int64_t b = step;  // the super-block
      const __m512 dx = _mm512_loadu_ps(dx_tile + b * 16);
      for (int n = 0; n < cols; ++n) {
        __m512i sum = _mm512_setzero_si512();
        for (int s = 0; s < L::kStep; ++s) {
          sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(_mm512_set1_epi32(p.sc[n * groups + g0 + s]),
                                                         _mm512_load_si512(st[s][n])));
        }
        const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(p.d[n * blocks + b]), dx);
        _mm512_store_ps(acc[n], _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(sum), _mm512_load_ps(acc[n])));
        if constexpr (L::kMinK) {
          __m512i msum = _mm512_setzero_si512();
          const int32_t* sums = a.sum_tiles.data() + (t * subs + 8 * b) * 16;
          for (int s = 0; s < 8; ++s) {
            msum = _mm512_add_epi32(msum, _mm512_mullo_epi32(_mm512_set1_epi32(p.mn[n * subs + 8 * b + s]),
                                                             _mm512_loadu_si512(sums + 16 * s)));
          }
          const __m512 mscale = _mm512_mul_ps(_mm512_set1_ps(p.m[n * blocks + b]), dx);
          _mm512_store_ps(accm[n], _mm512_fmadd_ps(mscale, _mm512_cvtepi32_ps(msum), _mm512_load_ps(accm[n])));
        }
      }
    }
  }
  if constexpr (!L::kK) {
    for (int n = 0; n < 16; ++n) _mm512_store_ps(acc[n], va[n]);
  }
  for (int i = 0; i < rows; ++i) {
    float* out = y + (16 * t + i) * ldy + j0;
    for (int n = 0; n < cols; ++n) {
      if constexpr (L::kMin32) {
        out[n] = acc[n][i] + accm[n][i];
      } else if constexpr (L::kMinK) {
        out[n] = acc[n][i] - accm[n][i];
      } else {
        out[n] = acc[n][i];
      }
    }
  }
}

template <BlockType T>
void Columns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1) {
  thread_local Panel panel;
  ConfigureTiles(Layout<T>::kGroup);
  const int64_t tiles = (a.m + 15) / 16;
  for (int64_t j0 = c0; j0 < c1; j0 += 16) {
    const int cols = static_cast<int>(std::min<int64_t>(16, c1 - j0));
    UnpackPanel<T>(w, j0, cols, &panel);
    for (int64_t t = 0; t < tiles; ++t) {
      PanelTimesTile<T>(a, panel, t, static_cast<int>(std::min<int64_t>(16, a.m - 16 * t)), cols, y, ldy, j0);
    }
  }
  _tile_release();  // a thread without tile state saves and restores less on each switch
}

}  // namespace

void AmxColumns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1) {
  switch (w.type()) {
    case BlockType::kQ8_0: return Columns<BlockType::kQ8_0>(a, w, y, ldy, c0, c1);
    case BlockType::kQ4_0: return Columns<BlockType::kQ4_0>(a, w, y, ldy, c0, c1);
    case BlockType::kQ4_1: return Columns<BlockType::kQ4_1>(a, w, y, ldy, c0, c1);
    case BlockType::kQ5_0: return Columns<BlockType::kQ5_0>(a, w, y, ldy, c0, c1);
    case BlockType::kQ5_1: return Columns<BlockType::kQ5_1>(a, w, y, ldy, c0, c1);
    case BlockType::kQ4_K: return Columns<BlockType::kQ4_K>(a, w, y, ldy, c0, c1);
    case BlockType::kQ5_K: return Columns<BlockType::kQ5_K>(a, w, y, ldy, c0, c1);
    case BlockType::kQ6_K: return Columns<BlockType::kQ6_K>(a, w, y, ldy, c0, c1);
    default: return;  // float types never take the block-sums path (BlockPathFor)
  }
}

}  // namespace infera::quant::block_matmul_internal

#pragma GCC diagnostic pop
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
