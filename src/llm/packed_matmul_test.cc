#include "llm/packed_matmul.h"

#include <cmath>
#include <random>
#include <vector>

#include "api/float16.h"
#include "common/cpu_features.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

using Kernel = void (*)(const float*, int64_t, int64_t, const PackedMatrix&, const float*, float*, int64_t, bool,
                        int64_t, int64_t);

struct Case {
  int64_t m, k, n;
  PackedType type;
  bool bias, accumulate;
};

std::vector<float> Random(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

bool Quantised(PackedType t) { return t == PackedType::kInt8 || t == PackedType::kInt4; }

// The largest |W - dequantised W| the format allows for column j, row kk of w [n][k]:
// int8: half a step of absmax/127 (per column); int4: one step |d| = group max / 8 (a
// positive extreme rounds to +8, clamped to 7), d rounded to fp16 (8 × 2^-11 ≈ 0.4 %, so
// 1 %).
double QuantisationBound(PackedType t, const std::vector<float>& w, int64_t n, int64_t k, int64_t j, int64_t kk) {
  (void)n;
  double amax = 0;
  int64_t begin = 0, end = k;
  if (t == PackedType::kInt4) {
    begin = kk / PackedMatrix::kInt4Group * PackedMatrix::kInt4Group;
    end = std::min(k, begin + PackedMatrix::kInt4Group);
  }
  for (int64_t r = begin; r < end; ++r) amax = std::max(amax, static_cast<double>(std::fabs(w[j * k + r])));
  if (t == PackedType::kInt8) return amax / 127.0 * 0.5 * 1.001 + 1e-12;
  return amax / 8.0 * 1.01 + 1e-12;
}

// Plain reference in double over the weights as packed (bf16-rounded for kBF16; the
// dequantised values for kInt8/kInt4, which must be within the format's error of W).
void CheckAgainstReference(Kernel kernel, const Case& c, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "m=" << c.m << " k=" << c.k << " n=" << c.n
                                  << " type=" << PackedTypeName(c.type) << " bias=" << c.bias
                                  << " accumulate=" << c.accumulate);
  std::mt19937 rng(seed);
  const int64_t ldx = c.k + 3, ldy = c.n + 5;  // strided rows
  std::vector<float> w = Random(rng, static_cast<size_t>(c.n * c.k));  // [n][k]
  std::vector<float> x = Random(rng, static_cast<size_t>(c.m * ldx));
  std::vector<float> bias = Random(rng, static_cast<size_t>(c.n));
  std::vector<float> y0 = Random(rng, static_cast<size_t>(c.m * ldy));
  PackedMatrix packed = PackedMatrix::FromOutIn(w.data(), c.n, c.k, c.type);
  ASSERT_EQ(packed.k(), c.k);
  ASSERT_EQ(packed.n(), c.n);
  std::vector<float> y = y0;
  kernel(x.data(), c.m, ldx, packed, c.bias ? bias.data() : nullptr, y.data(), ldy, c.accumulate, 0,
         packed.num_panels());
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double want = 0, magnitude = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        double wv;
        if (Quantised(c.type)) {
          wv = packed.At(kk, j);
          ASSERT_LE(std::fabs(wv - w[j * c.k + kk]), QuantisationBound(c.type, w, c.n, c.k, j, kk))
              << "k " << kk << " column " << j;
        } else {
          wv = c.type == PackedType::kBF16 ? Bf16ToFloat(FloatToBf16(w[j * c.k + kk])) : w[j * c.k + kk];
          EXPECT_EQ(packed.At(kk, j), static_cast<float>(wv));
        }
        want += x[i * ldx + kk] * wv;
        magnitude += std::fabs(x[i * ldx + kk] * wv);
      }
      if (c.bias) want += bias[j];
      if (c.accumulate) want += y0[i * ldy + j];
      const double tolerance = 1e-6 * (magnitude + 1) * 4;
      ASSERT_NEAR(y[i * ldy + j], want, tolerance) << "row " << i << " column " << j;
    }
    // Padding between rows is never written.
    for (int64_t j = c.n; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], y0[i * ldy + j]);
  }
  // Every row alone gives the same bits as in the batch (one FMA chain per output).
  for (int64_t i = 0; i < c.m; ++i) {
    std::vector<float> alone(y0.begin() + i * ldy, y0.begin() + (i + 1) * ldy);
    kernel(x.data() + i * ldx, 1, ldx, packed, c.bias ? bias.data() : nullptr, alone.data(), ldy, c.accumulate, 0,
           packed.num_panels());
    for (int64_t j = 0; j < c.n; ++j) ASSERT_EQ(alone[j], y[i * ldy + j]) << "row " << i << " column " << j;
  }
}

std::vector<std::pair<const char*, Kernel>> Kernels() {
  std::vector<std::pair<const char*, Kernel>> kernels = {{"portable", &packed_matmul_internal::Portable}};
  if (CpuHasAvx2Fma()) kernels.emplace_back("avx2+fma", &packed_matmul_internal::Avx2);
  if (CpuHasAvx512f()) kernels.emplace_back("avx512f", &packed_matmul_internal::Avx512);
  return kernels;
}

TEST(PackedMatmulTest, MatchesReferenceForEveryRowCountAndOddShapes) {
  // K: 1, below, at and past the int4 group (32) and not multiples of it; N: not
  // multiples of the 64-column panel.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1},     {7, 5},   {33, 64}, {64, 65},
                                                           {100, 129}, {17, 200}, {32, 3},  {97, 130}};
  uint32_t seed = 1;
  for (auto [name, kernel] : Kernels()) {
    SCOPED_TRACE(name);
    for (PackedType type : {PackedType::kF32, PackedType::kBF16, PackedType::kInt8, PackedType::kInt4}) {
      for (int64_t m = 1; m <= 17; ++m) {
        const auto [k, n] = shapes[static_cast<size_t>(m) % shapes.size()];
        CheckAgainstReference(kernel, {m, k, n, type, m % 2 == 0, m % 3 == 0}, seed++);
      }
    }
  }
}

TEST(PackedMatmulTest, LargeRowCountsSpanSeveralRowBlocks) {
  for (auto [name, kernel] : Kernels()) {
    SCOPED_TRACE(name);
    CheckAgainstReference(kernel, {101, 70, 130, PackedType::kF32, true, true}, 7);
    CheckAgainstReference(kernel, {50, 31, 64, PackedType::kBF16, false, false}, 8);
    CheckAgainstReference(kernel, {101, 70, 130, PackedType::kInt8, true, true}, 9);
    CheckAgainstReference(kernel, {53, 133, 70, PackedType::kInt4, true, false}, 10);
  }
}

// The baseline build, the AVX2 + FMA build and the AVX-512 kernel read the same
// dequantised weights; they may differ only in rounding of the sums (FMA or not).
TEST(PackedMatmulTest, KernelsAgreeWithEachOther) {
  const std::vector<std::pair<const char*, Kernel>> kernels = Kernels();
  if (kernels.size() < 2) GTEST_SKIP() << "only the baseline kernel runs on this CPU";
  std::mt19937 rng(11);
  const int64_t k = 200, n = 150;
  std::vector<float> w = Random(rng, n * k), x = Random(rng, 16 * k);
  for (PackedType type : {PackedType::kF32, PackedType::kBF16, PackedType::kInt8, PackedType::kInt4}) {
    PackedMatrix packed = PackedMatrix::FromOutIn(w.data(), n, k, type);
    for (int64_t m : {1, 2, 5, 16}) {  // both quantised paths of the C++ body (M <= 2 and more)
      std::vector<float> a(m * n);
      packed_matmul_internal::Portable(x.data(), m, k, packed, nullptr, a.data(), n, false, 0, packed.num_panels());
      for (size_t e = 1; e < kernels.size(); ++e) {
        std::vector<float> b(m * n);
        kernels[e].second(x.data(), m, k, packed, nullptr, b.data(), n, false, 0, packed.num_panels());
        for (size_t i = 0; i < a.size(); ++i) {
          ASSERT_NEAR(a[i], b[i], 1e-4) << kernels[e].first << " " << PackedTypeName(type) << " m=" << m << " " << i;
        }
      }
    }
  }
}

// The AVX2 build really fuses: on an FMA chain whose exact result differs from the
// separately rounded one, it gives the fused bits and the baseline build the other.
// (1 + 2^-12)² = 1 + 2^-11 + 2^-24 is a tie between two floats: rounded alone it is
// 1 + 2^-11 (even), and adding −(1 + 2^-11) gives 0; fused, the sum is 2^-24 exactly.
TEST(PackedMatmulTest, Avx2BuildUsesFusedMultiplyAdd) {
  if (!CpuHasAvx2Fma()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  const int64_t k = 2, n = 1;
  const float e = std::ldexp(1.0f, -12);
  // Both products are inexact: x0·w0 = 1 + 2e + e² and x1·w1 = −(1 + 2e + e²) each round
  // to ±(1 + 2e) (e² = 2^-24 is half an ulp of 1: a tie, to even), so the plain sum is 0.
  // An FMA that takes either product exact leaves ±e², whichever of the two the compiler
  // fuses.
  const std::vector<float> w = {1.0f + e, -(1.0f + e)};  // [n][k]
  const std::vector<float> x = {1.0f + e, 1.0f + e};
  PackedMatrix packed = PackedMatrix::FromOutIn(w.data(), n, k, PackedType::kF32);
  float fused = 1, plain = 1;
  packed_matmul_internal::Avx2(x.data(), 1, k, packed, nullptr, &fused, n, false, 0, 1);
  packed_matmul_internal::Portable(x.data(), 1, k, packed, nullptr, &plain, n, false, 0, 1);
  EXPECT_EQ(std::abs(fused), std::ldexp(1.0f, -24));
  EXPECT_EQ(plain, 0.0f);
}

TEST(PackedMatmulTest, QuantisedSizesAndExactValues) {
  const int64_t n = 70, k = 40;  // 2 panels; int4: 2 groups, the second of 8 rows
  std::vector<float> w(n * k, 0.0f);
  // Column 0: multiples of 0.5 in [-4, 3.5] (int4: d = 0.5 exactly, every value exact;
  // Q4_0 cannot hold +4 and -4 together: -8d and +8d, the latter clamped to 7d);
  // column 1: -1.27 .. 1.27 in steps of 0.01 (int8: scale 0.01); the rest zero.
  for (int64_t kk = 0; kk < k; ++kk) {
    w[0 * k + kk] = 0.5f * static_cast<float>(kk % 16 - 8);
    w[1 * k + kk] = 0.01f * static_cast<float>(kk * 3 - 60);
  }
  w[1 * k + 0] = 1.27f;
  PackedMatrix i8 = PackedMatrix::FromOutIn(w.data(), n, k, PackedType::kInt8);
  PackedMatrix i4 = PackedMatrix::FromOutIn(w.data(), n, k, PackedType::kInt4);
  EXPECT_EQ(i8.bytes(), static_cast<size_t>(2 * (k * 64 + 64 * 4)));
  EXPECT_EQ(i4.bytes(), static_cast<size_t>(2 * 2 * (32 * 32 + 64 * 2)));
  for (int64_t kk = 0; kk < k; ++kk) {
    EXPECT_NEAR(i8.At(kk, 1), w[1 * k + kk], 1e-6) << kk;
    EXPECT_EQ(i4.At(kk, 0), w[0 * k + kk]) << kk;
    for (int64_t j = 2; j < n; ++j) {
      EXPECT_EQ(i8.At(kk, j), 0.0f);
      EXPECT_EQ(i4.At(kk, j), 0.0f);
    }
  }
  // An all-zero x row gives exact zeros + bias; x = e_kk picks row kk of W.
  std::vector<float> x(k, 0.0f), y(n, 1.0f);
  x[5] = 1.0f;
  PackedMatmul(x.data(), 1, k, i4, nullptr, y.data(), n, false, 0, i4.num_panels());
  EXPECT_EQ(y[0], w[0 * k + 5]);
  EXPECT_EQ(y[2], 0.0f);
}

TEST(PackedMatmulTest, PanelRangeWritesOnlyItsColumns) {
  std::mt19937 rng(3);
  const int64_t m = 3, k = 20, n = 200;  // panels: [0,64) [64,128) [128,192) [192,200)
  std::vector<float> w = Random(rng, n * k), x = Random(rng, m * k);
  PackedMatrix packed = PackedMatrix::FromOutIn(w.data(), n, k, PackedType::kF32);
  ASSERT_EQ(packed.num_panels(), 4);
  std::vector<float> full(m * n, 0.0f), split(m * n, -7.0f);
  PackedMatmul(x.data(), m, k, packed, nullptr, full.data(), n, false, 0, 4);
  PackedMatmul(x.data(), m, k, packed, nullptr, split.data(), n, false, 1, 3);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (j >= 64 && j < 192) {
        EXPECT_EQ(split[i * n + j], full[i * n + j]);
      } else {
        EXPECT_EQ(split[i * n + j], -7.0f);
      }
    }
  }
}

TEST(PackedMatmulTest, Bf16SourceIsKeptExactly) {
  std::mt19937 rng(4);
  const int64_t n = 70, k = 9;
  std::vector<uint16_t> bits(n * k);
  for (uint16_t& b : bits) b = FloatToBf16(std::uniform_real_distribution<float>(-2, 2)(rng));
  std::vector<float> widened(n * k);
  for (size_t i = 0; i < bits.size(); ++i) widened[i] = Bf16ToFloat(bits[i]);
  PackedMatrix packed = PackedMatrix::FromOutIn(widened.data(), n, k, PackedType::kBF16);
  EXPECT_EQ(packed.bytes(), static_cast<size_t>(2 * 64 * k * 2));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t kk = 0; kk < k; ++kk) EXPECT_EQ(packed.At(kk, j), Bf16ToFloat(bits[j * k + kk]));
  }
}

// Hostile weights (a corrupt checkpoint): NaN and ±Inf in some columns must not crash
// packing or disturb the other columns; the quantised values stay in range.
TEST(PackedMatmulTest, NonFiniteWeightsStayInTheirColumns) {
  const int64_t n = 5, k = 40;
  std::vector<float> w(n * k, 0.25f);
  w[0 * k + 3] = std::nanf("");
  w[1 * k + 7] = INFINITY;
  w[2 * k + 33] = -INFINITY;
  for (PackedType type : {PackedType::kInt8, PackedType::kInt4}) {
    PackedMatrix packed = PackedMatrix::FromOutIn(w.data(), n, k, type);
    for (int64_t kk = 0; kk < k; ++kk) {
      EXPECT_NEAR(packed.At(kk, 3), 0.25f, 1e-6) << PackedTypeName(type);
      EXPECT_NEAR(packed.At(kk, 4), 0.25f, 1e-6) << PackedTypeName(type);
    }
    // Column 0's other weights: NaN never becomes the scale.
    EXPECT_NEAR(packed.At(0, 0), 0.25f, 1e-6) << PackedTypeName(type);
  }
  // Finite but beyond fp16 (int4's scale): saturated, never NaN.
  std::vector<float> big(2 * k, 1e6f);
  big[5] = -2e6f;
  PackedMatrix i4 = PackedMatrix::FromOutIn(big.data(), 2, k, PackedType::kInt4);
  for (int64_t kk = 0; kk < k; ++kk) {
    EXPECT_TRUE(std::isfinite(i4.At(kk, 0))) << kk;
    EXPECT_TRUE(std::isfinite(i4.At(kk, 1))) << kk;
  }
  EXPECT_EQ(i4.At(5, 0), -8.0f * 65504.0f);
}

TEST(PackedMatmulTest, PublicEntryUsesTheDetectedKernel) {
  const std::string isa = PackedMatmulIsa();
  EXPECT_EQ(isa, CpuHasAvx512f() ? "avx512f"
                 : CpuHasAvx2Fma() ? "avx2+fma"
                                                     : "portable");
}

}  // namespace
}  // namespace infera::llm
