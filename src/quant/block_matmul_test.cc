// BlockMatmul: every SIMD kernel equals the reference bit for bit, for every type, batch
// size, column split and awkward K; the reference stays within the stated bound of fp32;
// bad shapes are refused with a message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "api/float16.h"
#include "quant/block_matmul.h"
#include "quant/dequantize.h"
#include "quant/quantize.h"

namespace infera::quant {
namespace {

const BlockType kAllTypes[] = {BlockType::kF32,  BlockType::kF16,  BlockType::kBF16, BlockType::kQ8_0,
                               BlockType::kQ4_0, BlockType::kQ4_1, BlockType::kQ5_0, BlockType::kQ5_1,
                               BlockType::kQ4_K, BlockType::kQ5_K, BlockType::kQ6_K};

std::vector<float> Normal(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(n);
  for (float& f : v) f = normal(rng);
  return v;
}

// n rows of k quantised by the reference quantiser from normal weights.
std::vector<uint8_t> QuantizedMatrix(BlockType type, int64_t n, int64_t k, uint32_t seed) {
  const std::vector<float> w = Normal(static_cast<size_t>(n * k), seed, 0.05f);
  std::vector<uint8_t> blocks(static_cast<size_t>(n * RowBytes(type, k)));
  for (int64_t j = 0; j < n; ++j) QuantizeRow(type, w.data() + j * k, k, blocks.data() + j * RowBytes(type, k));
  return blocks;
}

// Random bytes with the half scales replaced by finite ones: every code pattern, including
// Q8_0's −128 and the extreme Q6_K scales, goes through the kernels.
std::vector<uint8_t> RandomBlocks(BlockType type, int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> blocks(static_cast<size_t>(n * RowBytes(type, k)));
  for (uint8_t& b : blocks) b = static_cast<uint8_t>(rng());
  std::vector<int> halves;
  switch (type) {
    case BlockType::kQ8_0: case BlockType::kQ4_0: case BlockType::kQ5_0: halves = {0}; break;
    case BlockType::kQ4_1: case BlockType::kQ5_1: case BlockType::kQ4_K: case BlockType::kQ5_K: halves = {0, 2}; break;
    case BlockType::kQ6_K: halves = {208}; break;
    default: halves = {};
  }
  std::uniform_real_distribution<float> scale(-0.1f, 0.1f);
  const int64_t bb = Info(type).block_bytes;
  if (!IsQuantized(type)) {  // finite floats
    const std::vector<float> w = Normal(static_cast<size_t>(n * k), seed);
    for (int64_t j = 0; j < n; ++j) QuantizeRow(type, w.data() + j * k, k, blocks.data() + j * RowBytes(type, k));
    return blocks;
  }
  for (size_t off = 0; off < blocks.size(); off += static_cast<size_t>(bb)) {
    for (int h : halves) {
      const uint16_t bits = FloatToHalf(scale(rng));
      std::memcpy(blocks.data() + off + h, &bits, 2);
    }
  }
  return blocks;
}

std::vector<float> Multiply(BlockKernel kernel, const std::vector<float>& x, int64_t m, const std::vector<uint8_t>& blocks,
                       BlockType type, int64_t n, int64_t k, int64_t c0 = 0, int64_t c1 = -1,
                       std::optional<BlockPath> path = std::nullopt) {
  std::string error;
  const auto w = BlockMatrix::View(blocks.data(), blocks.size(), type, n, k, &error);
  EXPECT_TRUE(w.has_value()) << error;
  const auto a = QuantizeActivations(x.data(), m, k, type, k, &error, kernel, path);
  EXPECT_TRUE(a.has_value()) << error;
  std::vector<float> y(static_cast<size_t>(m * n), -7.0f);
  if (!w || !a) return y;
  EXPECT_EQ(BlockMatmul(*a, *w, y.data(), n, c0, c1 < 0 ? n : c1), "");
  return y;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<int64_t> RowLengths(BlockType type) {
  if (!IsQuantized(type)) return {1, 17, 64, 100};
  if (Info(type).block_elements == 256) return {256, 512, 768};
  return {32, 64, 96, 2080};  // 32 and 96: a last chunk with one block
}

class KernelTest : public ::testing::TestWithParam<BlockKernel> {};

TEST_P(KernelTest, EqualsReferenceBitForBit) {
  const BlockKernel kernel = GetParam();
  if (!BlockKernelSupported(kernel)) GTEST_SKIP() << BlockKernelName(kernel) << " not supported by this CPU";
  const int64_t n = 13;
  uint32_t seed = 1;
  for (BlockType type : kAllTypes) {
    for (int64_t k : RowLengths(type)) {
      // 2 | 3, 4 | 5, 5 | 6, 7 | 8, 15 | 16: where a kernel's path switches
      for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 33}) {
        for (bool random_bytes : {false, true}) {
          const auto blocks = random_bytes ? RandomBlocks(type, n, k, ++seed) : QuantizedMatrix(type, n, k, ++seed);
          std::vector<float> x = Normal(static_cast<size_t>(m * k), ++seed);
          if (random_bytes) x[0] = 1e4f;  // a block whose other activations round to 0
          // The reference computes whichever contract the kernel's path for this M is.
          const auto expected =
              Multiply(BlockKernel::kReference, x, m, blocks, type, n, k, 0, -1, BlockPathFor(kernel, type, m));
          const auto got = Multiply(kernel, x, m, blocks, type, n, k);
          ASSERT_TRUE(SameBits(expected, got))
              << Name(type) << " k=" << k << " m=" << m << " random=" << random_bytes << " y[0] " << expected[0]
              << " vs " << got[0];
        }
      }
    }
  }
}

// A row's result depends neither on the other rows (M) nor on the column range.
TEST_P(KernelTest, RowsIndependentOfBatchAndColumnSplit) {
  const BlockKernel kernel = GetParam();
  if (!BlockKernelSupported(kernel)) GTEST_SKIP();
  const int64_t n = 21, m = 19;
  for (BlockType type : kAllTypes) {
    const int64_t k = Info(type).block_elements == 256 ? 512 : 160;
    const auto blocks = QuantizedMatrix(type, n, k, 3);
    const std::vector<float> x = Normal(static_cast<size_t>(m * k), 4);
    const auto all = Multiply(kernel, x, m, blocks, type, n, k);
    const BlockPath path = BlockPathFor(kernel, type, m);  // a single row: the same contract
    for (int64_t i : {0, 8, 18}) {
      const std::vector<float> one(x.begin() + i * k, x.begin() + (i + 1) * k);
      const auto single = Multiply(kernel, one, 1, blocks, type, n, k, 0, -1, path);
      ASSERT_EQ(std::memcmp(single.data(), all.data() + i * n, n * sizeof(float)), 0) << Name(type) << " row " << i;
    }
    std::vector<float> split = Multiply(kernel, x, m, blocks, type, n, k, 0, 5);
    const auto rest = Multiply(kernel, x, m, blocks, type, n, k, 5, n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_EQ(split[i * n + j], j < 5 ? all[i * n + j] : -7.0f) << "columns outside the range are untouched";
        if (j >= 5) split[i * n + j] = rest[i * n + j];
      }
    }
    ASSERT_TRUE(SameBits(split, all)) << Name(type);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelTest,
                         ::testing::Values(BlockKernel::kReference, BlockKernel::kAvx2, BlockKernel::kAvx512Vnni,
                                           BlockKernel::kAmx),
                         [](const auto& info) { return std::string(BlockKernelName(info.param)); });

// The block-sums path at prefill-like shapes: panels of 16 weight rows with a partial last
// one (n = 35), tiles of 16 activation rows with a partial last one, the longest K of the
// tests, every quantised type: the kernel == the reference's block-sums contract, bit for
// bit. AMX: every quantised type (the columns kernel below 16 rows for Q8_0, Q4_0, Q4_K and
// Q6_K, the tiles from 16); AVX-512 VNNI without AMX: the columns kernel at every M for
// those four types (its own tiles of rows from 16), the lanes path for the others.
class BlockSumsTest : public ::testing::TestWithParam<BlockKernel> {};

TEST_P(BlockSumsTest, EqualsReferenceBitForBit) {
  const BlockKernel kernel = GetParam();
  if (!BlockKernelSupported(kernel)) GTEST_SKIP() << BlockKernelName(kernel) << " not supported by this CPU";
  uint32_t seed = 100;
  for (BlockType type : kAllTypes) {
    const int64_t columns = ColumnsKernelMinRows(kernel, type);  // the AVX-512 columns kernel from there
    EXPECT_TRUE(ComputesBlockSums(BlockKernel::kReference, type) == IsQuantized(type)) << Name(type);
    if (!IsQuantized(type) || (kernel == BlockKernel::kAvx512Vnni && columns == 0)) {
      for (int64_t m : {1, 3, 16, 512}) EXPECT_EQ(BlockPathFor(kernel, type, m), BlockPath::kLanes) << Name(type);
      EXPECT_FALSE(ComputesBlockSums(kernel, type)) << Name(type);
      continue;
    }
    EXPECT_TRUE(ComputesBlockSums(kernel, type)) << Name(type);
    EXPECT_EQ(BlockPathFor(kernel, type, 1), BlockPath::kLanes);
    if (columns > 0) {
      EXPECT_EQ(BlockPathFor(kernel, type, columns - 1), BlockPath::kLanes) << Name(type);
      EXPECT_EQ(BlockPathFor(kernel, type, columns), BlockPath::kBlockSums) << Name(type);
    }
    EXPECT_EQ(BlockPathFor(kernel, type, 15), columns > 0 ? BlockPath::kBlockSums : BlockPath::kLanes);
    EXPECT_EQ(BlockPathFor(kernel, type, 16), BlockPath::kBlockSums);
    EXPECT_EQ(BlockPathFor(kernel, type, 512), BlockPath::kBlockSums);
    const int64_t k = Info(type).block_elements == 256 ? 2304 : 1056;
    for (int64_t n : {1, 16, 35}) {
      // Below 16 rows the AVX-512 columns kernel (Q8_0, Q4_0, Q4_K, Q6_K), every M from 1,
      // the path forced where M is under the type's threshold; 16 and more: tiles of rows,
      // full and partial (40 = 2 · 16 + 8, 47 = 2 · 16 + 15).
      const std::vector<int64_t> ms =
          columns > 0 ? std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 40, 47}
                      : std::vector<int64_t>{16, 40};
      for (int64_t m : ms) {
        for (bool random_bytes : {false, true}) {
          const auto blocks = random_bytes ? RandomBlocks(type, n, k, ++seed) : QuantizedMatrix(type, n, k, ++seed);
          std::vector<float> x = Normal(static_cast<size_t>(m * k), ++seed);
          if (random_bytes) x[5 % (m * k)] = -3e4f;
          const auto expected =
              Multiply(BlockKernel::kReference, x, m, blocks, type, n, k, 0, -1, BlockPath::kBlockSums);
          const auto got = Multiply(kernel, x, m, blocks, type, n, k, 0, -1, BlockPath::kBlockSums);
          ASSERT_TRUE(SameBits(expected, got)) << Name(type) << " n=" << n << " m=" << m << " random=" << random_bytes;
          // A column range starting inside a panel.
          std::vector<float> part = Multiply(kernel, x, m, blocks, type, n, k, n / 3, n, BlockPath::kBlockSums);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              ASSERT_EQ(part[i * n + j], j < n / 3 ? -7.0f : got[i * n + j]) << Name(type) << " " << i << "," << j;
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, BlockSumsTest, ::testing::Values(BlockKernel::kAvx512Vnni, BlockKernel::kAmx),
                         [](const auto& info) { return std::string(BlockKernelName(info.param)); });

// The two contracts differ only by float rounding of the same exact integer sums: each
// stays within the fp32 bound below; the test above and this one pin both.
TEST(BlockSumsContractTest, ForcingThePathIsCheckedAndBothPathsAgreeClosely) {
  std::string error;
  const std::vector<float> x = Normal(64 * 20, 3);
  EXPECT_FALSE(QuantizeActivations(x.data(), 20, 64, BlockType::kF16, 64, &error, BlockKernel::kReference,
                                   BlockPath::kBlockSums));
  EXPECT_EQ(error,
            "the block-sums path needs a quantised type and the amx or reference kernel (avx512vnni: Q8_0, Q4_0, "
            "Q4_K, Q6_K), got F16 and reference");
  EXPECT_FALSE(QuantizeActivations(x.data(), 20, 64, BlockType::kQ4_0, 64, &error, BlockKernel::kAvx2,
                                   BlockPath::kBlockSums));
  EXPECT_EQ(error,
            "the block-sums path needs a quantised type and the amx or reference kernel (avx512vnni: Q8_0, Q4_0, "
            "Q4_K, Q6_K), got Q4_0 and avx2");
  EXPECT_FALSE(QuantizeActivations(x.data(), 20, 64, BlockType::kQ5_0, 64, &error, BlockKernel::kAvx512Vnni,
                                   BlockPath::kBlockSums));
  EXPECT_EQ(error,
            "the block-sums path needs a quantised type and the amx or reference kernel (avx512vnni: Q8_0, Q4_0, "
            "Q4_K, Q6_K), got Q5_0 and avx512vnni");
  for (BlockType type : kAllTypes) {
    if (!IsQuantized(type)) continue;
    const int64_t k = Info(type).block_elements == 256 ? 512 : 128, n = 5, m = 20;
    const auto blocks = QuantizedMatrix(type, n, k, 8);
    const std::vector<float> xk = Normal(static_cast<size_t>(m * k), 9);
    const auto lanes = Multiply(BlockKernel::kReference, xk, m, blocks, type, n, k, 0, -1, BlockPath::kLanes);
    const auto sums = Multiply(BlockKernel::kReference, xk, m, blocks, type, n, k, 0, -1, BlockPath::kBlockSums);
    for (size_t e = 0; e < lanes.size(); ++e) {
      ASSERT_NEAR(lanes[e], sums[e], 1e-5f * (1.0f + std::fabs(lanes[e]))) << Name(type) << " " << e;
    }
  }
}

// The AVX-512 activation quantiser writes the portable one's codes and scales, including
// all-zero blocks, blocks whose 1/d overflows (0 · ∞ = NaN → 0) and infinities.
TEST(QuantizeActivationsTest, Avx512EqualsPortable) {
  if (!BlockKernelSupported(BlockKernel::kAvx512Vnni)) GTEST_SKIP() << "avx512vnni not supported by this CPU";
  const int64_t k = 1024, m = 3;
  std::vector<float> x = Normal(static_cast<size_t>(m * k), 21);
  for (int e = 0; e < 32; ++e) x[e] = 0.0f;                              // zero block
  for (int e = 32; e < 64; ++e) x[e] = e % 2 ? 1e-39f : 0.0f;           // tiny d: 1/d = ∞
  x[70] = std::numeric_limits<float>::infinity();
  x[300] = -2.5e38f;
  for (BlockType type : {BlockType::kQ4_0, BlockType::kQ4_K}) {
    std::string error;
    // The block-sums layout holds the same codes and scales (both paths, forced: at m = 3
    // the AVX-512 kernel would take block sums for these types, the reference lanes).
    const auto portable_sums =
        QuantizeActivations(x.data(), m, k, type, k, &error, BlockKernel::kReference, BlockPath::kBlockSums);
    const auto simd_sums =
        QuantizeActivations(x.data(), m, k, type, k, &error, BlockKernel::kAvx512Vnni, BlockPath::kBlockSums);
    ASSERT_TRUE(portable_sums && simd_sums) << error;
    EXPECT_EQ(portable_sums->q_tiles, simd_sums->q_tiles) << Name(type);
    EXPECT_EQ(portable_sums->d_tiles, simd_sums->d_tiles) << Name(type);
    const auto portable = QuantizeActivations(x.data(), m, k, type, k, &error, BlockKernel::kReference, BlockPath::kLanes);
    const auto simd = QuantizeActivations(x.data(), m, k, type, k, &error, BlockKernel::kAvx512Vnni, BlockPath::kLanes);
    ASSERT_TRUE(portable && simd) << error;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t c = 0; c < k / 64; ++c) {
        ASSERT_EQ(std::memcmp(portable->q(i, c), simd->q(i, c), 64), 0) << Name(type) << " row " << i << " chunk " << c;
      }
    }
    ASSERT_EQ(portable->d32.size(), simd->d32.size()) << Name(type);
    // (d32 is empty for the K-quants: memcmp must not see its null data().)
    if (!portable->d32.empty()) {
      ASSERT_EQ(std::memcmp(portable->d32.data(), simd->d32.data(), 4 * portable->d32.size()), 0) << Name(type);
    }
    ASSERT_EQ(portable->d256, simd->d256);
  }
}

// Against fp32 (dequantised weights × unquantised x, in double): the only difference is
// the activations' rounding, at most d_x / 2 per element, plus float rounding.
TEST(BlockMatmulTest, CloseToFp32OfDequantisedWeights) {
  const int64_t n = 16, m = 3;
  for (BlockType type : kAllTypes) {
    const int64_t k = Info(type).block_elements == 256 ? 1024 : 992;
    const auto blocks = QuantizedMatrix(type, n, k, 11);
    const std::vector<float> x = Normal(static_cast<size_t>(m * k), 12);
    const auto lanes = Multiply(BestBlockKernel(), x, m, blocks, type, n, k);
    const auto sums = IsQuantized(type)
                          ? Multiply(BlockKernel::kReference, x, m, blocks, type, n, k, 0, -1, BlockPath::kBlockSums)
                          : lanes;
    const int64_t act_block = Info(type).block_elements == 256 ? 256 : 32;
    std::vector<float> w(static_cast<size_t>(k));
    for (int64_t j = 0; j < n; ++j) {
      DequantizeRow(type, blocks.data() + j * RowBytes(type, k), k, w.data());
      for (int64_t i = 0; i < m; ++i) {
        double exact = 0.0, magnitude = 0.0, rounding = 0.0;
        for (int64_t b = 0; b < k / act_block; ++b) {
          float amax = 0.0f;
          for (int64_t e = b * act_block; e < (b + 1) * act_block; ++e) amax = std::max(amax, std::fabs(x[i * k + e]));
          const double dx = amax / 127.0;
          for (int64_t e = b * act_block; e < (b + 1) * act_block; ++e) {
            exact += static_cast<double>(x[i * k + e]) * w[e];
            magnitude += std::fabs(static_cast<double>(x[i * k + e]) * w[e]);
            rounding += std::fabs(w[e]) * dx / 2;
          }
        }
        const double bound = (IsQuantized(type) ? rounding : 0.0) + 1e-5 * magnitude;
        ASSERT_LE(std::fabs(lanes[i * n + j] - exact), bound) << Name(type) << " y[" << i << "][" << j << "]";
        ASSERT_LE(std::fabs(sums[i * n + j] - exact), bound) << Name(type) << " block sums y[" << i << "][" << j << "]";
      }
    }
  }
}

TEST(BlockMatmulTest, RefusesBadShapesWithAMessage) {
  std::string error;
  std::vector<uint8_t> blocks(18 * 4);
  EXPECT_FALSE(BlockMatrix::View(blocks.data(), blocks.size(), BlockType::kQ4_0, 2, 100, &error));
  EXPECT_EQ(error, "Q4_0 row length 100 is not a multiple of its block size 32");
  EXPECT_FALSE(BlockMatrix::View(blocks.data(), blocks.size(), BlockType::kQ4_0, 3, 64, &error));
  EXPECT_EQ(error, "Q4_0 matrix of 3 x 64 needs 108 bytes, got 72");
  EXPECT_FALSE(BlockMatrix::View(blocks.data(), blocks.size(), BlockType::kQ4_0, 0, 64, &error));
  EXPECT_EQ(error, "matrix must have at least one row, got 0");
  const std::vector<float> x(512, 1.0f);
  EXPECT_FALSE(QuantizeActivations(x.data(), 1, 300, BlockType::kQ4_K, 300, &error));
  EXPECT_EQ(error, "Q4_K row length 300 is not a multiple of its block size 256");
  EXPECT_FALSE(QuantizeActivations(x.data(), 0, 256, BlockType::kQ4_K, 256, &error));
  EXPECT_EQ(error, "activations must have at least one row, got 0");

  const auto w = BlockMatrix::View(blocks.data(), blocks.size(), BlockType::kQ4_0, 2, 64, &error);
  ASSERT_TRUE(w.has_value());
  const auto q8 = QuantizeActivations(x.data(), 1, 64, BlockType::kQ8_0, 64, &error);
  ASSERT_TRUE(q8.has_value());
  std::vector<float> y(2);
  EXPECT_EQ(BlockMatmul(*q8, *w, y.data(), 2, 0, 2), "activations were quantised for Q8_0, the matrix is Q4_0");
  const auto q4 = QuantizeActivations(x.data(), 1, 64, BlockType::kQ4_0, 64, &error);
  ASSERT_TRUE(q4.has_value());
  EXPECT_EQ(BlockMatmul(*q4, *w, y.data(), 2, 1, 3), "column range [1, 3) outside [0, 2)");
  EXPECT_EQ(BlockMatmul(*q4, *w, y.data(), 1, 0, 2), "output row stride 1 < n 2");
  EXPECT_EQ(BlockMatmul(*q4, *w, y.data(), 2, 0, 2), "");
}

}  // namespace
}  // namespace infera::quant
