// Internal to the SIMD kernels (block_matmul_avx2.cc, block_matmul_avx512.cc): unpack 64
// elements of a weight row into their unsigned codes u (block_types.h), as two 256-bit
// halves (elements 0..31, 32..63), with AVX2 instructions; and MinDot8, the K-quant mins'
// dot product both lanes kernels use. Included after each file's
// `#pragma GCC target`, inside its anonymous namespace, so every copy is compiled for
// that file's instruction set and stays local to it.

inline float HalfAt(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// Σ_s mins[s] · sums[s] over a Q4_K/Q5_K block's 8 sub-blocks (exact: vpmaddwd sees each
// min, ≤ 63, with high half 0 and each |Σ q over 32| ≤ 4064 < 2^15).
inline int32_t MinDot8(__m256i mins, const int32_t* sums) {
  const __m256i p = _mm256_madd_epi16(mins, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums)));
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
  t = _mm_add_epi32(t, _mm_unpackhi_epi64(t, t));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 1));
  return _mm_cvtsi128_si32(t);
}

// 16 packed bytes of a 32-element block → 32 nibbles in element order.
inline __m256i Nibbles32(const uint8_t* qs) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i m = _mm_set1_epi8(15);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), m), _mm_and_si128(v, m));
}

// Bit j of the little-endian 32-bit word at qh → 0x10 in byte j.
inline __m256i HighBits32(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3,
                                          3, 3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)), spread);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit), _mm256_set1_epi8(0x10));
}

// The 32 codes of one block of a 32-element type (Q8_0: the raw int8 codes).
template <BlockType T>
inline __m256i Codes32(const uint8_t* p) {
  if constexpr (T == BlockType::kQ8_0) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2));
  if constexpr (T == BlockType::kQ4_0) return Nibbles32(p + 2);
  if constexpr (T == BlockType::kQ4_1) return Nibbles32(p + 4);
  if constexpr (T == BlockType::kQ5_0) return _mm256_or_si256(Nibbles32(p + 6), HighBits32(p + 2));
  if constexpr (T == BlockType::kQ5_1) return _mm256_or_si256(Nibbles32(p + 8), HighBits32(p + 4));
  return _mm256_setzero_si256();
}

// Chunk c (elements 64c .. 64c+63) of a K-quant block at p, as (lo, hi).
template <BlockType T>
inline void CodesK(const uint8_t* p, int c, __m256i* lo, __m256i* hi) {
  const __m256i m4 = _mm256_set1_epi8(15);
  if constexpr (T == BlockType::kQ6_K) {
    const int half = c / 2, shift = 4 * (c % 2);
    const __m128i sh = _mm_cvtsi32_si128(shift);
    const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * half));
    const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * half + 32));
    const __m256i qh = _mm256_srl_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 128 + 32 * half)), sh);
    const __m256i m2 = _mm256_set1_epi8(3);
    *lo = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi16(ql0, sh), m4),
                          _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4));
    *hi = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi16(ql1, sh), m4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4));
  } else {
    const bool five = T == BlockType::kQ5_K;
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + (five ? 48 : 16) + 32 * c));
    *lo = _mm256_and_si256(v, m4);
    *hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    if (five) {
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
      const __m256i one = _mm256_set1_epi8(1);
      const __m256i b0 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c)), one);
      const __m256i b1 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c + 1)), one);
      *lo = _mm256_or_si256(*lo, _mm256_slli_epi16(b0, 4));
      *hi = _mm256_or_si256(*hi, _mm256_slli_epi16(b1, 4));
    }
  }
}

// All 8 sub-block scales and mins of a Q4_K/Q5_K block (12 packed bytes; the per-index
// UnpackKScaleMin of dequantize.h, four at a time in 32-bit words). Sub-blocks 0..3 keep
// the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); 4..7 take their low 4 bits from
// bytes 8..11 (scales: low nibbles, mins: high nibbles) and their top 2 bits from the top
// 2 bits of bytes 0..3 (scales) and 4..7 (mins).
inline void UnpackKScalesMins(const uint8_t* q12, uint8_t sc[8], uint8_t mn[8]) {
  uint32_t a, b, c;
  std::memcpy(&a, q12, 4);
  std::memcpy(&b, q12 + 4, 4);
  std::memcpy(&c, q12 + 8, 4);
  const uint32_t sc_lo = a & 0x3F3F3F3Fu, mn_lo = b & 0x3F3F3F3Fu;
  const uint32_t sc_hi = (c & 0x0F0F0F0Fu) | ((a >> 2) & 0x30303030u);
  const uint32_t mn_hi = ((c >> 4) & 0x0F0F0F0Fu) | ((b >> 2) & 0x30303030u);
  std::memcpy(sc, &sc_lo, 4);
  std::memcpy(sc + 4, &sc_hi, 4);
  std::memcpy(mn, &mn_lo, 4);
  std::memcpy(mn + 4, &mn_hi, 4);
}
