// BlockMatmul: every SIMD kernel equals the reference bit for bit, for every type, batch
// size, column split and awkward K; the reference stays within the stated bound of fp32;
// bad shapes are refused with a message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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
                       BlockType type, int64_t n, int64_t k, int64_t c0 = 0, int64_t c1 = -1) {
  std::string error;
  const auto w = BlockMatrix::View(blocks.data(), blocks.size(), type, n, k, &error);
  EXPECT_TRUE(w.has_value()) << error;
  const auto a = QuantizeActivations(x.data(), m, k, type, k, &error, kernel);
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
      for (int64_t m : {1, 2, 7, 8, 9, 17}) {
        for (bool random_bytes : {false, true}) {
          const auto blocks = random_bytes ? RandomBlocks(type, n, k, ++seed) : QuantizedMatrix(type, n, k, ++seed);
          std::vector<float> x = Normal(static_cast<size_t>(m * k), ++seed);
          if (random_bytes) x[0] = 1e4f;  // a block whose other activations round to 0
          const auto expected = Multiply(BlockKernel::kReference, x, m, blocks, type, n, k);
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
    for (int64_t i : {0, 8, 18}) {
      const std::vector<float> one(x.begin() + i * k, x.begin() + (i + 1) * k);
      const auto single = Multiply(kernel, one, 1, blocks, type, n, k);
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
                         ::testing::Values(BlockKernel::kReference, BlockKernel::kAvx2, BlockKernel::kAvx512Vnni),
                         [](const auto& info) { return std::string(BlockKernelName(info.param)); });

// Against fp32 (dequantised weights × unquantised x, in double): the only difference is
// the activations' rounding, at most d_x / 2 per element, plus float rounding.
TEST(BlockMatmulTest, CloseToFp32OfDequantisedWeights) {
  const int64_t n = 16, m = 3;
  for (BlockType type : kAllTypes) {
    const int64_t k = Info(type).block_elements == 256 ? 1024 : 992;
    const auto blocks = QuantizedMatrix(type, n, k, 11);
    const std::vector<float> x = Normal(static_cast<size_t>(m * k), 12);
    const auto y = Multiply(BestBlockKernel(), x, m, blocks, type, n, k);
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
        ASSERT_LE(std::fabs(y[i * n + j] - exact), bound) << Name(type) << " y[" << i << "][" << j << "]";
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
