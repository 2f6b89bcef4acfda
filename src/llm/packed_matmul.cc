#include "llm/packed_matmul.h"

#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "api/float16.h"

// Built with -O3 (see CMakeLists.txt). The AVX-512 kernel is intrinsics in functions
// with target("avx512f"); the portable kernel is plain loops, cloned for AVX2.

namespace infera::llm {
namespace {

constexpr int64_t kW = PackedMatrix::kPanelWidth;
constexpr int kMaxTileRows = 6;  // 6 rows × 4 zmm = 24 accumulators of 32 registers
// Rows per block when M is large (prefill): the x block (48 × K floats) and one panel
// stay in L2 while the tiles of the block run over that panel.
constexpr int64_t kRowBlock = 48;

// Where column c (0 ≤ c < 64) of a panel row sits in bf16 storage: each group of 32
// columns is stored as pairs (c, c + 16), so 32-bit lane i of a 512-bit load holds
// columns i (low half) and i + 16 (high half); a shift left by 16 widens the first to
// fp32, masking off the low half widens the second.
int64_t Bf16Slot(int64_t c) {
  const int64_t group = c / 32, i = c % 32;
  return group * 32 + (i < 16 ? 2 * i : 2 * (i - 16) + 1);
}

// The number of row tiles for `rows` rows, and the rows of tile t (as even as possible:
// 8 rows → 4 + 4, 16 → 6 + 5 + 5).
int64_t NumTiles(int64_t rows) { return (rows + kMaxTileRows - 1) / kMaxTileRows; }
int64_t TileRows(int64_t rows, int64_t tiles, int64_t t) { return rows / tiles + (t < rows % tiles ? 1 : 0); }

// ------------------------------------------------------------------------------ AVX-512

#define INFERA_AVX512 __attribute__((target("avx512f")))

// acc[R rows][64] (row stride 64 floats) = x[R rows][0..k) · panel[0..k)[64]; the
// accumulators live in registers for the whole k loop.
template <int R, bool kBf16>
INFERA_AVX512 void TileAvx512(const float* x, int64_t ldx, const void* panel, int64_t k, float* acc_out) {
  __m512 acc[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    __m512 w[4];
    if constexpr (kBf16) {
      const uint16_t* wp = static_cast<const uint16_t*>(panel) + kk * kW;
      const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
      const __m512i a = _mm512_load_si512(wp), b = _mm512_load_si512(wp + 32);
      // maskz with a full mask: the unmasked intrinsic trips g++ 12's -Wmaybe-uninitialized
      // in its own header (same instruction).
      w[0] = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, a, 16));
      w[1] = _mm512_castsi512_ps(_mm512_and_si512(a, high));
      w[2] = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, b, 16));
      w[3] = _mm512_castsi512_ps(_mm512_and_si512(b, high));
    } else {
      const float* wp = static_cast<const float*>(panel) + kk * kW;
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) w[j] = _mm512_load_ps(wp + 16 * j);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * ldx + kk]);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_fmadd_ps(xv, w[j], acc[r][j]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) _mm512_store_ps(acc_out + r * kW + 16 * j, acc[r][j]);
  }
}

template <bool kBf16>
INFERA_AVX512 void TileAvx512Rows(int64_t rows, const float* x, int64_t ldx, const void* panel, int64_t k,
                                  float* acc) {
  switch (rows) {
    case 1: return TileAvx512<1, kBf16>(x, ldx, panel, k, acc);
    case 2: return TileAvx512<2, kBf16>(x, ldx, panel, k, acc);
    case 3: return TileAvx512<3, kBf16>(x, ldx, panel, k, acc);
    case 4: return TileAvx512<4, kBf16>(x, ldx, panel, k, acc);
    case 5: return TileAvx512<5, kBf16>(x, ldx, panel, k, acc);
    default: return TileAvx512<6, kBf16>(x, ldx, panel, k, acc);
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

template <bool kBf16>
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
        TileAvx512Rows<kBf16>(r, x + (r0 + i) * ldx, ldx, w.panel(p), w.k(), acc + i * kW);
        i += r;
      }
      StoreAvx512(acc, rows, bias ? bias + c0 : nullptr, y + r0 * ldy + c0, ldy, accumulate, cols);
    }
  }
}

// ------------------------------------------------------------------------------ portable

// One row at a time over a panel: 64 accumulators (8 ymm on AVX2), k in order. bf16
// accumulates in storage order and un-permutes at the end.
__attribute__((target_clones("avx2", "default")))
void MatmulPortable(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
                    int64_t ldy, bool accumulate, int64_t p0, int64_t p1) {
  const bool bf16 = w.type() == PackedType::kBF16;
  const int64_t k = w.k();
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t c0 = p * kW, cols = std::min(kW, w.n() - c0);
    for (int64_t i = 0; i < m; ++i) {
      const float* xr = x + i * ldx;
      float acc[kW] = {};
      if (bf16) {
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

}  // namespace

namespace packed_matmul_internal {

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

void Avx512(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y, int64_t ldy,
            bool accumulate, int64_t panel_begin, int64_t panel_end) {
  if (w.type() == PackedType::kBF16) {
    MatmulAvx512<true>(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
  } else {
    MatmulAvx512<false>(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
  }
}

void Portable(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
              int64_t ldy, bool accumulate, int64_t panel_begin, int64_t panel_end) {
  MatmulPortable(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
}

}  // namespace packed_matmul_internal

template <typename Get>
PackedMatrix PackedMatrix::Pack(int64_t n, int64_t k, PackedType type, Get get) {
  PackedMatrix m;
  m.n_ = n;
  m.k_ = k;
  m.type_ = type;
  const size_t elements = static_cast<size_t>(m.num_panels()) * static_cast<size_t>(k) * kW;
  m.bytes_ = elements * m.ElementBytes();
  // Matrices of 2 MiB or more sit on transparent huge pages where the kernel allows it
  // (madvise mode): one decode step streams every weight, and with 4 KiB pages that is
  // a TLB miss every 4 KiB.
  const size_t align = m.bytes_ >= (size_t{2} << 20) ? (size_t{2} << 20) : 64;
  const size_t rounded = std::max((m.bytes_ + align - 1) / align * align, align);
  m.data_.reset(static_cast<unsigned char*>(std::aligned_alloc(align, rounded)));
  if (align > 64) madvise(m.data_.get(), rounded, MADV_HUGEPAGE);
  std::memset(m.data_.get(), 0, rounded);
  for (int64_t p = 0; p < m.num_panels(); ++p) {
    for (int64_t c = 0; c < kW && p * kW + c < n; ++c) {
      const int64_t col = p * kW + c;
      if (type == PackedType::kF32) {
        float* dst = reinterpret_cast<float*>(const_cast<void*>(m.panel(p)));
        for (int64_t kk = 0; kk < k; ++kk) dst[kk * kW + c] = get(col, kk);
      } else {
        uint16_t* dst = reinterpret_cast<uint16_t*>(const_cast<void*>(m.panel(p)));
        const int64_t slot = Bf16Slot(c);
        for (int64_t kk = 0; kk < k; ++kk) dst[kk * kW + slot] = FloatToBf16(get(col, kk));
      }
    }
  }
  return m;
}

PackedMatrix PackedMatrix::FromOutIn(const float* w, int64_t n, int64_t k, PackedType type) {
  return Pack(n, k, type, [w, k](int64_t col, int64_t kk) { return w[col * k + kk]; });
}

float PackedMatrix::At(int64_t kk, int64_t nn) const {
  const int64_t p = nn / kW, c = nn % kW;
  if (type_ == PackedType::kF32) return static_cast<const float*>(panel(p))[kk * kW + c];
  return Bf16ToFloat(static_cast<const uint16_t*>(panel(p))[kk * kW + Bf16Slot(c)]);
}

void PackedMatmul(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
                  int64_t ldy, bool accumulate, int64_t panel_begin, int64_t panel_end) {
  if (m <= 0 || panel_begin >= panel_end) return;
  if (packed_matmul_internal::HasAvx512()) {
    packed_matmul_internal::Avx512(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
  } else {
    packed_matmul_internal::Portable(x, m, ldx, w, bias, y, ldy, accumulate, panel_begin, panel_end);
  }
}

const char* PackedMatmulIsa() { return packed_matmul_internal::HasAvx512() ? "avx512f" : "portable"; }

}  // namespace infera::llm
