// The block-sums path (block_matmul.h) for Q8_0, Q4_0, Q4_K and Q6_K in AVX-512 VNNI: the
// 16 float lanes of a vector are 16 output columns (weight rows), not 16 places along K
// as on the lanes path. The AMX kernel calls it from M = 3 up to 15 (the batched decode
// steps); on CPUs with AVX-512 VNNI but no AMX (AMD Zen 4) it is the whole block-sums
// path, M = 3 .. 15 and prefill (M ≥ 16: PanelTiles, the panel unpacked once for all
// tiles of rows).
//
// Per panel of 16 weight rows and per 32-element block: the 16 rows' codes are transposed
// in registers into 8 vectors, vector g holding in lane l the 4 codes 4g .. 4g+3 of weight
// row l (Q4_0: low nibbles give elements 0..15, high nibbles 16..31). Then for each row i
// of x, 8 vpdpbusd with the row's 4 activation bytes broadcast from memory give the 16
// exact block sums at once, starting from −c · Σ q (offset_tiles: the codes are unsigned,
// u = w_int + c); one convert and one fma apply d_w · d_x. That is the block-sums contract
// operation for operation: acc = fma(d_w(b) · d_x(b), float(I_b), acc), blocks in order.
// The K-quants (PanelQ4K, PanelQ6K) do the same per sub-block and apply the integer
// sub-block scales before the super-block's fma.
//
// Why: on the lanes path every row pays a convert, a scale broadcast and an fma per 64
// codes; here they are paid per 512 products, and the transposition (8 loads, 24
// shuffles) once per block for all M rows. The panels are read from a staging copy (see
// PanelsOf); docs/quant_kernels.md has the figures.
//
// Compiled for AVX-512F/BW + VNNI; called only from BlockMatmul when the kAmx or kAvx512Vnni
// kernel (both imply them) is chosen. Internal linkage for every helper, as in the other
// kernel files.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
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

// Byte offsets of the weight rows in kLaneRow order (row stride `stride`): the gathers
// of a block's per-row scales.
inline __m512i LaneRowOffsets(int64_t stride) {
  return _mm512_mullo_epi32(_mm512_loadu_si512(kLaneRow), _mm512_set1_epi32(static_cast<int32_t>(stride)));
}

template <BlockType T>
constexpr int64_t kBlockBytes = T == BlockType::kQ8_0 ? 34 : 18;

// 32 bytes at p of each of 16 rows (row stride `stride`) as 8 vectors: lane q of t[g]
// holds bytes 4g .. 4g+3 of row kLaneRow[q]. z[l] = row l | row l + 8, then an 8×8 dword
// transpose within each 256-bit half.
inline void Transpose32(const uint8_t* p, int64_t stride, __m512i t[8]) {
  __m512i z[8];
  for (int l = 0; l < 8; ++l) {
    z[l] = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + l * stride))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + (l + 8) * stride)), 1);
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
  for (int g = 0; g < 4; ++g) {
    t[g] = _mm512_shuffle_i32x4(s2[g], s2[4 + g], 0x88);
    t[g + 4] = _mm512_shuffle_i32x4(s2[g], s2[4 + g], 0xDD);
  }
}

// Block b of the 16 weight rows at p (row stride `stride`) as 8 vectors of unsigned codes
// (lane q: weight row kLaneRow[q]; vector g: its elements 4g .. 4g+3).
template <BlockType T>
inline void TransposeBlock(const uint8_t* p, int64_t stride, __m512i v[8]) {
  if constexpr (T == BlockType::kQ8_0) {
    Transpose32(p + 2, stride, v);
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // signed q → u = q + 128
    for (int g = 0; g < 8; ++g) v[g] = _mm512_xor_si512(v[g], flip);
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

// Copies `bytes` from src to dst (64-byte aligned) in `steps` near-equal shares of whole
// cache lines, Step(i) the i-th; Finish() copies whatever the steps left. Default: no copy.
class Stager {
 public:
  Stager() = default;
  Stager(const uint8_t* src, uint8_t* dst, int64_t bytes, int64_t steps)
      : src_(src), dst_(dst), bytes_(bytes), share_((bytes / std::max<int64_t>(1, steps) + 63) / 64 * 64) {}
  void Step(int64_t i) {
    if (src_ == nullptr) return;
    const int64_t begin = i * share_, end = std::min(bytes_, begin + share_);
    Copy(begin, end);
    done_ = std::max(done_, end);
  }
  void Finish() {
    if (src_ != nullptr) Copy(done_, bytes_);
  }

 private:
  void Copy(int64_t begin, int64_t end) {
    int64_t o = begin;
    for (; o + 64 <= end; o += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(src_ + o + kStagePrefetchBytes), _MM_HINT_T0);
      _mm512_store_si512(dst_ + o, _mm512_loadu_si512(src_ + o));
    }
    if (o < end) std::memcpy(dst_ + o, src_ + o, static_cast<size_t>(end - o));
  }
  static constexpr int64_t kStagePrefetchBytes = 2048;  // as the lanes kernels' stream
  const uint8_t* src_ = nullptr;
  uint8_t* dst_ = nullptr;
  int64_t bytes_ = 0, share_ = 0, done_ = 0;
};

// The staging schedule, stated once per panel kernel: the Stager steps a kernel takes per
// 256 elements of K. Each kernel calls Step(i) for every i in [0, K · this / 256), and
// PanelsOf cuts the next panel into that many shares; were the two to disagree, Finish()
// would copy the shares never stepped all at once. Panel (Q8_0, Q4_0): one a 32-element
// block; PanelQ4K: four a super-block; PanelQ6K: eight a super-block.
template <BlockType T>
inline constexpr int64_t kStagingStepsPer256 = 8;
template <>
inline constexpr int64_t kStagingStepsPer256<BlockType::kQ4_K> = 4;

// The 16 half scales d_w of a block (the first 2 bytes of each weight row's block) as
// floats, lane q: weight row kLaneRow[q].
inline __m512 BlockScales(__m512i scale_offsets, const uint8_t* block) {
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_i32gather_epi32(scale_offsets, block, 1)));
}

// Rows 0 .. R−1 of one tile of x against one block (the 16 weight rows' codes transposed
// into v, their scales dw): per row the 16 exact block sums, starting from −c · Σ q, and
// the contract's fma. q: the tile's quads of this block (quad g of row i at q + 64g + 4i);
// dx, off: the block's d_x and −c · Σ q per row.
template <int R>
__attribute__((always_inline)) inline void AccumulateBlock(const __m512i v[8], __m512 dw, const int8_t* q,
                                                           const float* dx, const int32_t* off, __m512 acc[R]) {
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

// Output rows 0 .. R−1 (row stride ldy), columns j0 .. j0 + cols, from accumulators in lane
// order.
template <int R>
__attribute__((always_inline)) inline void StoreRows(const __m512 acc[R], float* y, int64_t ldy, int64_t j0, int cols) {
  const __m512i natural = _mm512_loadu_si512(kLaneRow);  // kLaneRow is its own inverse
  const __mmask16 live = cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ldy + j0, live, _mm512_permutexvar_ps(natural, acc[r]));
}

// fn(std::integral_constant<int, R>) for R = rows, 1 ≤ rows ≤ kMax: a row count known at run
// time as a template argument (the accumulators are registers).
template <int kMax, int R = 1, typename Fn>
inline void WithRows(int rows, Fn&& fn) {
  if constexpr (R < kMax) {
    if (rows != R) return WithRows<kMax, R + 1>(rows, fn);
  }
  fn(std::integral_constant<int, R>{});
}

// y rows 0 .. R−1 (R = a.m < 16), columns j0 .. j0 + cols of the panel whose 16 weight rows
// start at p (row stride `stride`; rows past `cols` are zeros). `next` stages the following
// panel, a step per block.
template <BlockType T, int R>
void Panel(const QuantizedActivations& a, const uint8_t* p, int64_t stride, Stager& next, float* y,
           int64_t ldy, int64_t j0, int cols) {
  static_assert(kStagingStepsPer256<T> == 256 / 32, "Panel steps once a 32-element block");
  constexpr int64_t kBytes = kBlockBytes<T>;
  const int64_t blocks = a.k / 32;
  const __m512i scale_offsets = LaneRowOffsets(stride);
  __m512 acc[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = p + b * kBytes;
    next.Step(b);
    const __m512 dw = BlockScales(scale_offsets, block);
    __m512i v[8];
    TransposeBlock<T>(block, stride, v);
    AccumulateBlock<R>(v, dw, a.q_tiles.data() + b * 8 * 64, a.d_tiles.data() + b * 16, a.offset_tiles.data() + b * 16,
                       acc);
  }
  StoreRows<R>(acc, y, ldy, j0, cols);
}

// A panel's blocks as Panel transposes them, unpacked once for many tiles of x: per block
// the 8 code vectors, then the 16 scales as floats.
constexpr int64_t kUnpackedBlockBytes = 8 * 64 + 64;

// Rows 16t .. 16t + R − 1 of x (tile t; R ≤ 16) against an unpacked panel, accumulators in
// registers.
template <int R>
void TileRows(const QuantizedActivations& a, const uint8_t* unpacked, int64_t t, float* y, int64_t ldy, int64_t j0,
              int cols) {
  const int64_t blocks = a.k / 32;
  const int8_t* q = a.q_tiles.data() + t * 16 * a.k;
  const float* dx = a.d_tiles.data() + t * blocks * 16;
  const int32_t* off = a.offset_tiles.data() + t * blocks * 16;
  __m512 acc[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* u = unpacked + b * kUnpackedBlockBytes;
    __m512i v[8];
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) v[g] = _mm512_load_si512(u + 64 * g);
    AccumulateBlock<R>(v, _mm512_load_ps(u + 8 * 64), q + b * 8 * 64, dx + b * 16, off + b * 16, acc);
  }
  StoreRows<R>(acc, y + 16 * t * ldy, ldy, j0, cols);
}

// Prefill-sized M (a.m ≥ 16) for Q8_0 and Q4_0: the panel is transposed once into a
// thread_local scratch (`next` stepped once a block, as in Panel), then every tile of 16
// rows of x runs against it from L1/L2. Why not Panel per 15 rows: it would transpose
// the panel once per 15 rows, about a third of its work at M = 16.
template <BlockType T>
void PanelTiles(const QuantizedActivations& a, const uint8_t* p, int64_t stride, Stager& next, float* y, int64_t ldy,
                int64_t j0, int cols) {
  static_assert(kStagingStepsPer256<T> == 256 / 32, "the unpacking steps once a 32-element block");
  constexpr int64_t kBytes = kBlockBytes<T>;
  const int64_t blocks = a.k / 32;
  thread_local std::vector<uint8_t, CacheLineAllocator<uint8_t>> unpacked;
  if (unpacked.size() < static_cast<size_t>(blocks * kUnpackedBlockBytes)) {
    unpacked.resize(static_cast<size_t>(blocks * kUnpackedBlockBytes));
  }
  const __m512i scale_offsets = LaneRowOffsets(stride);
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = p + b * kBytes;
    next.Step(b);
    uint8_t* u = unpacked.data() + b * kUnpackedBlockBytes;
    __m512i v[8];
    TransposeBlock<T>(block, stride, v);
    for (int g = 0; g < 8; ++g) _mm512_store_si512(u + 64 * g, v[g]);
    _mm512_store_ps(u + 8 * 64, BlockScales(scale_offsets, block));
  }
  for (int64_t t = 0; 16 * t < a.m; ++t) {
    const int rows = static_cast<int>(std::min<int64_t>(16, a.m - 16 * t));
    WithRows<16>(rows, [&](auto r) { TileRows<decltype(r)::value>(a, unpacked.data(), t, y, ldy, j0, cols); });
  }
}

// Byte j (0..3) of each dword lane, zero-extended.
inline __m512i ByteOf(__m512i words, int j) {
  return _mm512_and_si512(_mm512_srli_epi32(words, 8 * j), _mm512_set1_epi32(0xFF));
}

// Q4_K (144-byte super-blocks of 256: d, dmin, 12 bytes of 6-bit sub-block scales and
// mins, 128 bytes of nibbles; chunk c's 32 bytes hold sub-block 2c in the low nibbles and
// 2c + 1 in the high ones). Per super-block and 16 weight rows: the four chunks
// transposed into 8 + 8 code vectors each (kept in L1, `codes`), the sub-block scales and
// mins as vectors (lane q: weight row kLaneRow[q]); then per row of x, per sub-block 8
// vpdpbusd give the 16 exact sums, times the scale (vpmulld: the sums need 17 bits), and
// the mins' Σ_s mn[s] · Σ q_s by 4 vpdpwssd on (mn, Σ q) int16 pairs. The contract's
// two fmas per super-block follow. Rows: any M (their accumulators are in `acc`, a
// thread_local scratch; row r of x is row r mod 16 of activation tile r / 16).
void PanelQ4K(const QuantizedActivations& a, const uint8_t* p, int64_t stride, Stager& next, float* y,
              int64_t ldy, int64_t j0, int cols) {
  constexpr int64_t kBytes = 144;
  constexpr int64_t kSteps = kStagingStepsPer256<BlockType::kQ4_K>;
  static_assert(kSteps == 4, "the Step calls below are four a super-block");
  const int64_t supers = a.k / 256, rows = a.m;
  const __m512i lane_offsets = LaneRowOffsets(stride);
  thread_local std::vector<float, CacheLineAllocator<float>> scratch;
  scratch.assign(static_cast<size_t>(2 * rows * 16), 0.0f);
  float* acc = scratch.data();                // row r: acc + 16r
  float* accm = scratch.data() + rows * 16;   // row r: accm + 16r
  alignas(64) __m512i codes[4][16];  // [chunk][g: low nibbles 0..7, high 8..15]
  const __m512i m4 = _mm512_set1_epi8(15), m6 = _mm512_set1_epi32(63);
  for (int64_t b = 0; b < supers; ++b) {
    const uint8_t* block = p + b * kBytes;
    next.Step(kSteps * b);
    // d | dmin, and the 12 scale bytes as three dwords, per weight row.
    const __m512i head = _mm512_i32gather_epi32(lane_offsets, block, 1);
    const __m512i s0 = _mm512_i32gather_epi32(lane_offsets, block + 4, 1);
    const __m512i s1 = _mm512_i32gather_epi32(lane_offsets, block + 8, 1);
    const __m512i s2 = _mm512_i32gather_epi32(lane_offsets, block + 12, 1);
    const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(head));
    const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head, 16)));
    // UnpackKScaleMin per lane: byte j of the 12 is byte j % 4 of s[j / 4].
    __m512i sc[8], mn[8];
    for (int j = 0; j < 4; ++j) {
      sc[j] = _mm512_and_si512(ByteOf(s0, j), m6);
      mn[j] = _mm512_and_si512(ByteOf(s1, j), m6);
      const __m512i hi = ByteOf(s2, j);  // byte j + 8
      sc[j + 4] = _mm512_or_si512(_mm512_and_si512(hi, _mm512_set1_epi32(15)),
                                  _mm512_slli_epi32(_mm512_srli_epi32(ByteOf(s0, j), 6), 4));
      mn[j + 4] = _mm512_or_si512(_mm512_srli_epi32(hi, 4), _mm512_slli_epi32(_mm512_srli_epi32(ByteOf(s1, j), 6), 4));
    }
    __m512i mn_pairs[4];  // lane: mn[2t] | mn[2t + 1] << 16, for vpdpwssd
    for (int t = 0; t < 4; ++t) mn_pairs[t] = _mm512_or_si512(mn[2 * t], _mm512_slli_epi32(mn[2 * t + 1], 16));
    for (int c = 0; c < 4; ++c) {
      __m512i t[8];
      Transpose32(block + 16 + 32 * c, stride, t);
      for (int g = 0; g < 8; ++g) {
        codes[c][g] = _mm512_and_si512(t[g], m4);
        codes[c][8 + g] = _mm512_and_si512(_mm512_srli_epi16(t[g], 4), m4);
      }
    }
    next.Step(kSteps * b + 1);
    for (int64_t r = 0; r < rows; ++r) {
      if (r == rows / 2) next.Step(kSteps * b + 2);
      const int64_t t = r / 16, i = r % 16;
      const int8_t* q = a.q_tiles.data() + t * 16 * a.k + b * 64 * 64 + 4 * i;  // quad 64b + e of the row at q + 64e
      const float dx = a.d_tiles[static_cast<size_t>((t * supers + b) * 16 + i)];
      const int32_t* sums = a.sum_tiles.data() + (t * (a.k / 32) + 8 * b) * 16 + i;  // sub-block s: sums[16s]
      __m512i isum = _mm512_setzero_si512();
      for (int c = 0; c < 4; ++c) {
        __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {
          int32_t qlo, qhi;
          std::memcpy(&qlo, q + 64 * (16 * c + g), 4);
          std::memcpy(&qhi, q + 64 * (16 * c + 8 + g), 4);
          lo = _mm512_dpbusd_epi32(lo, codes[c][g], _mm512_set1_epi32(qlo));
          hi = _mm512_dpbusd_epi32(hi, codes[c][8 + g], _mm512_set1_epi32(qhi));
        }
        isum = _mm512_add_epi32(isum, _mm512_add_epi32(_mm512_mullo_epi32(lo, sc[2 * c]),
                                                       _mm512_mullo_epi32(hi, sc[2 * c + 1])));
      }
      __m512i msum = _mm512_setzero_si512();
      for (int u = 0; u < 4; ++u) {
        // Σ q over 32 fits int16 (|Σ| ≤ 32 · 127), as does mn ≤ 63.
        const uint32_t pair = static_cast<uint16_t>(sums[16 * (2 * u)]) |
                              static_cast<uint32_t>(static_cast<uint16_t>(sums[16 * (2 * u + 1)])) << 16;
        msum = _mm512_dpwssd_epi32(msum, mn_pairs[u], _mm512_set1_epi32(static_cast<int32_t>(pair)));
      }
      const __m512 vdx = _mm512_set1_ps(dx);
      float* acc_r = acc + 16 * r;
      float* accm_r = accm + 16 * r;
      _mm512_store_ps(acc_r, _mm512_fmadd_ps(_mm512_mul_ps(d, vdx), _mm512_cvtepi32_ps(isum), _mm512_load_ps(acc_r)));
      _mm512_store_ps(accm_r,
                      _mm512_fmadd_ps(_mm512_mul_ps(dmin, vdx), _mm512_cvtepi32_ps(msum), _mm512_load_ps(accm_r)));
    }
    next.Step(kSteps * b + 3);
  }
  const __m512i natural = _mm512_loadu_si512(kLaneRow);  // kLaneRow is its own inverse
  const __mmask16 live = cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1);
  for (int64_t r = 0; r < rows; ++r) {
    const __m512 out = _mm512_sub_ps(_mm512_load_ps(acc + 16 * r), _mm512_load_ps(accm + 16 * r));
    _mm512_mask_storeu_ps(y + r * ldy + j0, live, _mm512_permutexvar_ps(natural, out));
  }
}

// Q6_K (210-byte super-blocks of 256: ql[128] low nibbles, qh[64] 2-bit highs, 16 int8
// sub-block scales, d). Half h (128 elements) of a super-block: ql bytes 64h .. 64h+31
// (A) and 64h+32 .. 64h+63 (B), qh bytes 32h .. 32h+31 (H); element 32·part + i of the
// half is (A or B)[i]'s low (part 0, 1) or high (2, 3) nibble | bits 2·part, 2·part+1 of
// H[i] at 0x30. Per half and 16 weight rows: A, B, H transposed (Transpose32), the 32
// code vectors of the half built with one ternary-logic op each (kept in L1, `codes`);
// the 16 scales sign-extended from four gathered dwords. Per row of x and sub-block of
// 16: 4 vpdpbusd starting from −32 · Σ q (offset_tiles; u = w_int + 32) give the exact
// Σ w_int · q, times the scale (vpmulld), summed into I_b; one fma per super-block. Rows:
// any M, accumulators in a thread_local scratch as in PanelQ4K.
void PanelQ6K(const QuantizedActivations& a, const uint8_t* p, int64_t stride, Stager& next, float* y,
              int64_t ldy, int64_t j0, int cols) {
  constexpr int64_t kBytes = 210;
  constexpr int64_t kSteps = kStagingStepsPer256<BlockType::kQ6_K>;
  static_assert(kSteps == 8, "the Step calls below are eight a super-block");
  const int64_t supers = a.k / 256, rows = a.m;
  const __m512i lane_offsets = LaneRowOffsets(stride);
  thread_local std::vector<float, CacheLineAllocator<float>> scratch;
  scratch.assign(static_cast<size_t>(rows * 16), 0.0f);
  float* acc = scratch.data();  // row r: acc + 16r
  alignas(64) __m512i codes[64];  // vector 4s + v: elements 16s + 4v .. +3 of the super-block
  const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
  for (int64_t b = 0; b < supers; ++b) {
    const uint8_t* block = p + b * kBytes;
    next.Step(kSteps * b);
    // d is the high half of bytes 206..209 (the last scale bytes before it keep the
    // gather inside the block).
    const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(
        _mm512_srli_epi32(_mm512_i32gather_epi32(lane_offsets, block + 206, 1), 16)));
    __m512i sc[16];
    for (int w = 0; w < 4; ++w) {
      const __m512i words = _mm512_i32gather_epi32(lane_offsets, block + 192 + 4 * w, 1);
      for (int j = 0; j < 4; ++j) sc[4 * w + j] = _mm512_srai_epi32(_mm512_slli_epi32(words, 24 - 8 * j), 24);
    }
    next.Step(kSteps * b + 1);
    for (int h = 0; h < 2; ++h) {
      next.Step(kSteps * b + 2 + h);
      __m512i A[8], B[8], H[8];
      Transpose32(block + 64 * h, stride, A);
      Transpose32(block + 64 * h + 32, stride, B);
      Transpose32(block + 128 + 32 * h, stride, H);
      for (int g = 0; g < 8; ++g) {
        // element 128h + 32·part + 4g .. +3 → codes[(128h + 32·part + 4g) / 4]
        __m512i* out = codes + 32 * h + g;
        out[0] = _mm512_ternarylogic_epi32(_mm512_and_si512(A[g], m4), _mm512_slli_epi16(H[g], 4), m30, 0xF8);
        out[8] = _mm512_ternarylogic_epi32(_mm512_and_si512(B[g], m4), _mm512_slli_epi16(H[g], 2), m30, 0xF8);
        out[16] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(A[g], 4), m4), H[g], m30, 0xF8);
        out[24] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(B[g], 4), m4),
                                            _mm512_srli_epi16(H[g], 2), m30, 0xF8);
      }
    }
    int64_t staged = 4;  // steps 4 .. 7 of the super-block spread over the rows (every one taken)
    for (int64_t r = 0; r < rows; ++r) {
      while (staged < 4 + 4 * (r + 1) / rows) next.Step(kSteps * b + staged++);
      const int64_t t = r / 16, i = r % 16;
      const int8_t* q = a.q_tiles.data() + t * 16 * a.k + b * 64 * 64 + 4 * i;  // quad 64b + e of the row at q + 64e
      const float dx = a.d_tiles[static_cast<size_t>((t * supers + b) * 16 + i)];
      const int32_t* off = a.offset_tiles.data() + (t * (a.k / 16) + 16 * b) * 16 + i;  // sub-block s: off[16s]
      __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int s = 0; s < 16; ++s) {
        __m512i sum = _mm512_set1_epi32(off[16 * s]);
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
          int32_t quad;
          std::memcpy(&quad, q + 64 * (4 * s + v), 4);
          sum = _mm512_dpbusd_epi32(sum, codes[4 * s + v], _mm512_set1_epi32(quad));
        }
        isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(sum, sc[s]));
      }
      float* acc_r = acc + 16 * r;
      _mm512_store_ps(acc_r, _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(dx)), _mm512_cvtepi32_ps(isum),
                                             _mm512_load_ps(acc_r)));
    }
  }
  const __m512i natural = _mm512_loadu_si512(kLaneRow);  // kLaneRow is its own inverse
  const __mmask16 live = cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1);
  for (int64_t r = 0; r < rows; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy + j0, live, _mm512_permutexvar_ps(natural, _mm512_load_ps(acc + 16 * r)));
  }
}

// Columns [c0, c1) panel by panel, each computed from a copy in a thread_local staging
// buffer: panel(p, stride, stager, j0, cols) with p the staged rows (rows past `cols`
// zero), and the stager copying the next panel into the other buffer a share per block.
// Why: read in place, the 16 rows of a panel are 16 streams a block apart, which the
// hardware prefetchers follow poorly (6-7 GB/s a thread from memory, against 9-10 for the
// lanes kernel's one stream); the copy reads each panel as one sequential run (its 16 rows
// are contiguous) while the previous one computes, and the kernel reads L1/L2.
template <BlockType T, typename PanelFn>
void PanelsOf(const BlockMatrix& w, int64_t c0, int64_t c1, PanelFn panel) {
  const int64_t stride = w.row_bytes();
  const int64_t steps = w.k() * kStagingStepsPer256<T> / 256;
  const size_t panel_bytes = static_cast<size_t>(16 * stride);
  thread_local std::vector<uint8_t, CacheLineAllocator<uint8_t>> buffers[2];
  for (auto& b : buffers) {
    if (b.size() < panel_bytes + 64) b.resize(panel_bytes + 64);
  }
  auto rows_of = [&](int64_t j0) { return static_cast<int>(std::min<int64_t>(16, c1 - j0)); };
  // A partial panel: its rows, then zeros (copied at once; only a range's last panel).
  auto stage_partial = [&](int64_t j0, uint8_t* dst) {
    const size_t bytes = static_cast<size_t>(rows_of(j0) * stride);
    std::memcpy(dst, w.row(j0), bytes);
    std::memset(dst + bytes, 0, panel_bytes - bytes);
  };
  // The first panel of the range is read in place (its 16 streams are slow, but a copy
  // before it could start would stall the thread on memory with nothing to overlap);
  // every later one from the buffer its predecessor staged.
  const bool first_in_place = rows_of(c0) == 16;
  int current = 0;
  if (!first_in_place) stage_partial(c0, buffers[0].data());
  for (int64_t j0 = c0; j0 < c1; j0 += 16) {
    const int64_t j1 = j0 + 16;
    uint8_t* next_buffer = buffers[1 - current].data();
    Stager stager;
    if (j1 < c1 && rows_of(j1) == 16) {
      stager = Stager(w.row(j1), next_buffer, static_cast<int64_t>(panel_bytes), steps);
    } else if (j1 < c1) {
      stage_partial(j1, next_buffer);
    }
    const uint8_t* rows = j0 == c0 && first_in_place ? w.row(c0) : buffers[current].data();
    panel(rows, stride, stager, j0, rows_of(j0));
    stager.Finish();
    current = 1 - current;
  }
}

template <BlockType T>
void Dispatch(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1) {
  if (a.m >= 16) {
    PanelsOf<T>(w, c0, c1, [&](const uint8_t* p, int64_t stride, Stager& next, int64_t j0, int cols) {
      PanelTiles<T>(a, p, stride, next, y, ldy, j0, cols);
    });
    return;
  }
  WithRows<15>(static_cast<int>(a.m), [&](auto r) {
    PanelsOf<T>(w, c0, c1, [&](const uint8_t* p, int64_t stride, Stager& next, int64_t j0, int cols) {
      Panel<T, decltype(r)::value>(a, p, stride, next, y, ldy, j0, cols);
    });
  });
}

}  // namespace

void ColumnsAvx512(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0,
                   int64_t c1) {
  if (w.type() == BlockType::kQ8_0) return Dispatch<BlockType::kQ8_0>(a, w, y, ldy, c0, c1);
  if (w.type() == BlockType::kQ4_0) return Dispatch<BlockType::kQ4_0>(a, w, y, ldy, c0, c1);
  if (w.type() == BlockType::kQ4_K) {
    PanelsOf<BlockType::kQ4_K>(w, c0, c1, [&](const uint8_t* p, int64_t stride, Stager& next, int64_t j0, int cols) {
      PanelQ4K(a, p, stride, next, y, ldy, j0, cols);
    });
  }
  if (w.type() == BlockType::kQ6_K) {
    PanelsOf<BlockType::kQ6_K>(w, c0, c1, [&](const uint8_t* p, int64_t stride, Stager& next, int64_t j0, int cols) {
      PanelQ6K(a, p, stride, next, y, ldy, j0, cols);
    });
  }
}

}  // namespace infera::quant::block_matmul_internal

#pragma GCC diagnostic pop
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
