// Internal to the SIMD kernels: the loops of block_matmul.h's math, written once against
// a 16-lane vector vocabulary that each kernel file defines before including this (in its
// anonymous namespace, after its `#pragma GCC target`):
//   CodeVec  64 unsigned codes        ChunkCodes32<T, kBytes>(p0, has1), ChunkCodesK<T>(p, c)
//                                     (Q8_0 biased by +128 when kQ8Biased)
//   IVec     16 int32 lanes           IZero, ILoad, IAdd
//            Dot(u, x, init) = init + Σ over each lane's 4 bytes of u · x (u unsigned)
//            DotSigned(w, x, init): the same with signed codes w (only when !kQ8Biased)
//   FVec     16 float lanes           FZero, FLoad, FMul, FFma, FSet1, Cvt, Reduce
//            LoadF<T>(16 weights of a float type)
//   BlockScales32  the d of 16 blocks: Load<kBytes>(first, count), Products(dx, s) (s = d · dx
//                  per block), Pair(s, i) → FVec
//   KScales<T>     a K-quant block's sub-block scales: Load(p), Chunk(c) → IVec;
//                  IMulScale(v, Chunk(c)) = v · scale per lane (exact); MinDot(sums) =
//                  Σ over the 8 sub-blocks of min · sums (Q4_K/Q5_K)
// The kernel files build these so that the loop stays off the shuffle port where they
// can (block_matmul_avx512.cc).
// Lane l of every vector covers elements 4l .. 4l+3 of a 64-element chunk, or element l
// of 16 for the float types, as in the reference.

// Every loop over a tile's rows fully unrolled: otherwise GCC keeps the accumulator array
// in memory and stores every row's accumulator back on each chunk (8 zmm stores per chunk
// at M = 8).
#define INFERA_UNROLL_ROWS _Pragma("GCC unroll 8")

constexpr int64_t kPrefetchBytes = 2048;  // ahead of the weight stream (768: 30 % slower from DRAM)

template <BlockType T, int R>
void Tile32(const QuantizedActivations& a, const uint8_t* row, int64_t r0, float* y, int64_t ldy, int64_t j) {
  constexpr int64_t kBytes = T == BlockType::kQ8_0   ? 34
                             : T == BlockType::kQ4_0 ? 18
                             : T == BlockType::kQ4_1 ? 20
                             : T == BlockType::kQ5_0 ? 22
                                                     : 24;
  constexpr bool kMin = T == BlockType::kQ4_1 || T == BlockType::kQ5_1;
  constexpr bool kSigned = T == BlockType::kQ8_0 && !kQ8Biased;
  // The activations carry lane offsets for the biased codes (CodeBias ≠ 0) only.
  constexpr bool kOffsets = T == BlockType::kQ4_0 || T == BlockType::kQ5_0 || (T == BlockType::kQ8_0 && kQ8Biased);
  const int64_t blocks = a.k / 32, chunks = a.kp / 64, kp = a.kp;
  (void)kp;
  FVec acc[R];
  float accm[R];
  INFERA_UNROLL_ROWS
  for (int r = 0; r < R; ++r) {
    acc[r] = FZero();
    accm[r] = 0.0f;
  }
  BlockScales32 scales;
  alignas(64) float products[R][16];  // d_w · d_x of the 16 blocks of the current 8 chunks, per row
  for (int64_t c = 0; c < chunks; ++c) {
    const uint8_t* p0 = row + 2 * c * kBytes;
    _mm_prefetch(reinterpret_cast<const char*>(p0 + kPrefetchBytes), _MM_HINT_T0);
    const bool has1 = 2 * c + 1 < blocks;
    if ((c & 7) == 0) {
      scales.template Load<kBytes>(p0, std::min<int64_t>(16, blocks - 2 * c));
      INFERA_UNROLL_ROWS
      for (int r = 0; r < R; ++r) scales.Products(a.d32.data() + (r0 + r) * kp / 32 + 2 * c, products[r]);
    }
    float m0 = 0.0f, m1 = 0.0f;
    if constexpr (kMin) {
      m0 = HalfAt(p0 + 2);
      m1 = has1 ? HalfAt(p0 + kBytes + 2) : 0.0f;
    }
    const CodeVec u = ChunkCodes32<T, kBytes>(p0, has1);
    const uint8_t* records = a.chunk(r0, c);  // the tile's rows, one record after another
    INFERA_UNROLL_ROWS
    for (int r = 0; r < R; ++r) {
      const uint8_t* record = records + r * a.record_bytes;
      const auto* x = reinterpret_cast<const int8_t*>(record);
      const IVec init = kOffsets ? ILoad(reinterpret_cast<const int32_t*>(record + 64)) : IZero();
      IVec v;
      if constexpr (kSigned) {
        v = DotSigned(u, x, init);
      } else {
        v = Dot(u, x, init);
      }
      acc[r] = FFma(BlockScales32::Pair(products[r], static_cast<int>(c & 7)), Cvt(v), acc[r]);
      if constexpr (kMin) {
        const float* ds = a.dsum32.data() + (r0 + r) * kp / 32 + 2 * c;
        accm[r] = std::fma(m0, ds[0], accm[r]);
        if (has1) accm[r] = std::fma(m1, ds[1], accm[r]);
      }
    }
  }
  INFERA_UNROLL_ROWS
  for (int r = 0; r < R; ++r) y[(r0 + r) * ldy + j] = kMin ? Reduce(acc[r]) + accm[r] : Reduce(acc[r]);
}

template <BlockType T, int R>
void TileK(const QuantizedActivations& a, const uint8_t* row, int64_t r0, float* y, int64_t ldy, int64_t j) {
  constexpr int64_t kBytes = T == BlockType::kQ4_K ? 144 : T == BlockType::kQ5_K ? 176 : 210;
  constexpr bool kQ6 = T == BlockType::kQ6_K;
  const int64_t kp = a.kp;
  FVec acc[R];
  float accm[R];
  INFERA_UNROLL_ROWS
  for (int r = 0; r < R; ++r) {
    acc[r] = FZero();
    accm[r] = 0.0f;
  }
  for (int64_t b = 0; b < a.k / 256; ++b) {
    const uint8_t* p = row + b * kBytes;
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + 64), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + 128), _MM_HINT_T0);
    KScales<T> scales;
    scales.Load(p);
    const float d = HalfAt(kQ6 ? p + 208 : p), dmin = kQ6 ? 0.0f : HalfAt(p + 2);
    IVec il[R];
    INFERA_UNROLL_ROWS
    for (int r = 0; r < R; ++r) il[r] = IZero();
    _Pragma("GCC unroll 4")
    for (int c = 0; c < 4; ++c) {
      const CodeVec u = ChunkCodesK<T>(p, c);
      const IVec scale = scales.Chunk(c);
      const uint8_t* records = a.chunk(r0, 4 * b + c);
      INFERA_UNROLL_ROWS
      for (int r = 0; r < R; ++r) {
        const uint8_t* record = records + r * a.record_bytes;
        const IVec init = kQ6 ? ILoad(reinterpret_cast<const int32_t*>(record + 64)) : IZero();
        il[r] = IAdd(il[r], IMulScale(Dot(u, reinterpret_cast<const int8_t*>(record), init), scale));
      }
    }
    INFERA_UNROLL_ROWS
    for (int r = 0; r < R; ++r) {
      const int64_t i = r0 + r;
      const float dx = a.d256[i * kp / 256 + b];
      acc[r] = FFma(FSet1(d * dx), Cvt(il[r]), acc[r]);
      if constexpr (!kQ6) {
        const int32_t isum_m = scales.MinDot(a.sum32.data() + i * kp / 32 + 8 * b);
        accm[r] = std::fma(dmin * dx, static_cast<float>(isum_m), accm[r]);
      }
    }
  }
  INFERA_UNROLL_ROWS
  for (int r = 0; r < R; ++r) y[(r0 + r) * ldy + j] = kQ6 ? Reduce(acc[r]) : Reduce(acc[r]) - accm[r];
}

template <BlockType T, int R>
void TileF(const QuantizedActivations& a, const uint8_t* row, int64_t r0, float* y, int64_t ldy, int64_t j) {
  constexpr int64_t kElem = T == BlockType::kF32 ? 4 : 2;
  const int64_t full = a.k / 16, tail = a.k % 16;
  FVec acc[R];
  INFERA_UNROLL_ROWS
  for (int r = 0; r < R; ++r) acc[r] = FZero();
  for (int64_t g = 0; g <= full; ++g) {
    const uint8_t* p = row + 16 * g * kElem;
    alignas(64) uint8_t padded[64];
    if (g == full) {  // the last, partial group: zero weights beyond k (x is zero-padded)
      if (tail == 0) break;
      std::memset(padded, 0, sizeof padded);
      std::memcpy(padded, p, static_cast<size_t>(tail * kElem));
      p = padded;
    } else {
      _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes), _MM_HINT_T0);
    }
    const FVec w = LoadF<T>(p);
    INFERA_UNROLL_ROWS
    for (int r = 0; r < R; ++r) acc[r] = FFma(FLoad(a.x.data() + (r0 + r) * a.kp + 16 * g), w, acc[r]);
  }
  INFERA_UNROLL_ROWS
  for (int r = 0; r < R; ++r) y[(r0 + r) * ldy + j] = Reduce(acc[r]);
}

template <BlockType T, int R>
void Tile(const QuantizedActivations& a, const uint8_t* row, int64_t r0, float* y, int64_t ldy, int64_t j) {
  if constexpr (T == BlockType::kF32 || T == BlockType::kF16 || T == BlockType::kBF16) {
    TileF<T, R>(a, row, r0, y, ldy, j);
  } else if constexpr (T == BlockType::kQ4_K || T == BlockType::kQ5_K || T == BlockType::kQ6_K) {
    TileK<T, R>(a, row, r0, y, ldy, j);
  } else {
    Tile32<T, R>(a, row, r0, y, ldy, j);
  }
}

// Column by column (so a weight row is read from memory once), tiles of up to kTileRows
// rows of x each (the later tiles find the row in L1/L2).
template <BlockType T>
void Columns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1) {
  using block_matmul_internal::kTileRows;
  for (int64_t j = c0; j < c1; ++j) {
    const uint8_t* row = w.row(j);
    for (int64_t r0 = 0; r0 < a.m; r0 += kTileRows) {
      switch (std::min<int64_t>(kTileRows, a.m - r0)) {
        case 1: Tile<T, 1>(a, row, r0, y, ldy, j); break;
        case 2: Tile<T, 2>(a, row, r0, y, ldy, j); break;
        case 3: Tile<T, 3>(a, row, r0, y, ldy, j); break;
        case 4: Tile<T, 4>(a, row, r0, y, ldy, j); break;
        case 5: Tile<T, 5>(a, row, r0, y, ldy, j); break;
        case 6: Tile<T, 6>(a, row, r0, y, ldy, j); break;
        case 7: Tile<T, 7>(a, row, r0, y, ldy, j); break;
        default: Tile<T, 8>(a, row, r0, y, ldy, j); break;
      }
    }
  }
}

void AllColumns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1) {
  switch (w.type()) {
    case BlockType::kF32: return Columns<BlockType::kF32>(a, w, y, ldy, c0, c1);
    case BlockType::kF16: return Columns<BlockType::kF16>(a, w, y, ldy, c0, c1);
    case BlockType::kBF16: return Columns<BlockType::kBF16>(a, w, y, ldy, c0, c1);
    case BlockType::kQ8_0: return Columns<BlockType::kQ8_0>(a, w, y, ldy, c0, c1);
    case BlockType::kQ4_0: return Columns<BlockType::kQ4_0>(a, w, y, ldy, c0, c1);
    case BlockType::kQ4_1: return Columns<BlockType::kQ4_1>(a, w, y, ldy, c0, c1);
    case BlockType::kQ5_0: return Columns<BlockType::kQ5_0>(a, w, y, ldy, c0, c1);
    case BlockType::kQ5_1: return Columns<BlockType::kQ5_1>(a, w, y, ldy, c0, c1);
    case BlockType::kQ4_K: return Columns<BlockType::kQ4_K>(a, w, y, ldy, c0, c1);
    case BlockType::kQ5_K: return Columns<BlockType::kQ5_K>(a, w, y, ldy, c0, c1);
    case BlockType::kQ6_K: return Columns<BlockType::kQ6_K>(a, w, y, ldy, c0, c1);
  }
}
