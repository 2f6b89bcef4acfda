#include "llm/packed_matmul.h"

#include <cmath>
#include <random>
#include <vector>

#include "api/float16.h"
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

// Plain reference in double over the weights as packed (bf16-rounded for kBF16).
void CheckAgainstReference(Kernel kernel, const Case& c, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "m=" << c.m << " k=" << c.k << " n=" << c.n
                                  << " bf16=" << (c.type == PackedType::kBF16) << " bias=" << c.bias
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
        const double wv = c.type == PackedType::kBF16 ? Bf16ToFloat(FloatToBf16(w[j * c.k + kk])) : w[j * c.k + kk];
        EXPECT_EQ(packed.At(kk, j), static_cast<float>(wv));
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
  if (packed_matmul_internal::HasAvx512()) kernels.emplace_back("avx512f", &packed_matmul_internal::Avx512);
  return kernels;
}

TEST(PackedMatmulTest, MatchesReferenceForEveryRowCountAndOddShapes) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1}, {7, 5}, {33, 64}, {64, 65}, {100, 129}, {17, 200}};
  uint32_t seed = 1;
  for (auto [name, kernel] : Kernels()) {
    SCOPED_TRACE(name);
    for (PackedType type : {PackedType::kF32, PackedType::kBF16}) {
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
  }
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

TEST(PackedMatmulTest, PublicEntryUsesTheDetectedKernel) {
  const std::string isa = PackedMatmulIsa();
  EXPECT_EQ(isa, packed_matmul_internal::HasAvx512() ? "avx512f" : "portable");
}

}  // namespace
}  // namespace infera::llm
