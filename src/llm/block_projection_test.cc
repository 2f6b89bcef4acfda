// BlockProjection's row and column tiling gives the bits of one BlockMatmul over all
// rows: a prefill chunk larger than a row block, parts of two types (as Q4_K_M's qkv with
// a Q6_K v), accumulate and bias, 1 and 2 intra-op threads.
#include "llm/block_projection.h"

#include <ATen/Parallel.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "quant/block_matmul.h"
#include "quant/quantize.h"

namespace infera::llm {
namespace {

struct TestMatrix {
  std::vector<uint8_t> bytes;
  quant::BlockMatrix matrix;
};

TestMatrix RandomMatrix(quant::BlockType type, int64_t n, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  TestMatrix m;
  const int64_t row_bytes = quant::RowBytes(type, k);
  m.bytes.resize(static_cast<size_t>(n * row_bytes));
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    for (float& v : row) v = normal(rng);
    quant::QuantizeRow(type, row.data(), k, m.bytes.data() + j * row_bytes);
  }
  std::string error;
  m.matrix = *quant::BlockMatrix::View(m.bytes.data(), m.bytes.size(), type, n, k, &error);
  return m;
}

// y = x · W of one part by a single QuantizeActivations + BlockMatmul over every row.
void Untiled(const std::vector<float>& x, int64_t rows, const BlockPart& part, std::vector<float>& y, int64_t ldy) {
  std::string error;
  auto a = quant::QuantizeActivations(x.data(), rows, part.matrix.k(), part.matrix.type(), part.matrix.k(), &error);
  ASSERT_TRUE(a) << error;
  ASSERT_EQ(quant::BlockMatmul(*a, part.matrix, y.data() + part.out_offset, ldy, 0, part.matrix.n()), "");
}

class BlockProjectionTest : public ::testing::TestWithParam<int> {};

// Projections of `types` (640, 96 and 96 outputs, like a fused qkv) over 2 · row block + 5
// rows: BlockProjection equals one kernel call per part over all rows, bit for bit.
void CheckTiledEqualsOneCall(const std::vector<quant::BlockType>& types);

// Quantised parts: row blocks on the lanes path (AVX2 CPUs); where the kernel takes the
// block-sums path (AMX, or AVX-512 VNNI for these Q4_K/Q6_K parts), one block of all rows
// (block_projection.h).
TEST_P(BlockProjectionTest, TiledEqualsOneCallOverAllRows) {
  at::set_num_threads(GetParam());
  CheckTiledEqualsOneCall({quant::BlockType::kQ4_K, quant::BlockType::kQ4_K, quant::BlockType::kQ6_K});
}

// Float parts are row-blocked on every CPU (so the tiling is exercised where the quantised
// parts take the block-sums path).
TEST_P(BlockProjectionTest, FloatPartsTiledEqualsOneCallOverAllRows) {
  at::set_num_threads(GetParam());
  CheckTiledEqualsOneCall({quant::BlockType::kF16, quant::BlockType::kF16, quant::BlockType::kBF16});
}

void CheckTiledEqualsOneCall(const std::vector<quant::BlockType>& types) {
  std::mt19937 rng(7);
  const int64_t in = 2048;  // a row block of BlockProjectionRowBlock(2048) rows
  const int64_t row_block = BlockProjectionRowBlock(in);
  ASSERT_GE(row_block, 8);
  ASSERT_EQ(row_block % 8, 0);
  const int64_t rows = 2 * row_block + 5;  // two whole row blocks and a ragged one
  // qkv-like, wide enough for several column blocks.
  const int64_t outs[3] = {640, 96, 96};
  std::vector<TestMatrix> mats;
  for (size_t i = 0; i < 3; ++i) mats.push_back(RandomMatrix(types[i], outs[i], in, rng));
  Projection w;
  w.in = in;
  for (const TestMatrix& m : mats) {
    w.blocks.push_back(BlockPart{m.matrix, w.out});
    w.out += m.matrix.n();
  }
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * in)), bias(static_cast<size_t>(w.out));
  for (float& v : x) v = normal(rng);
  for (float& v : bias) v = normal(rng);

  std::vector<float> want(static_cast<size_t>(rows * w.out));
  for (const BlockPart& part : w.blocks) Untiled(x, rows, part, want, w.out);
  BlockProjectionWorkspace workspace;
  WorkerTeam team(2);  // two threads: the pieces are claimed concurrently
  std::vector<float> got(want.size(), -1.0f);
  BlockProjection(x.data(), rows, w, nullptr, got.data(), w.out, false, &workspace, team);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;

  // Accumulate with bias into a wider y (row stride > out): y + (x · W) + bias, in that
  // order, and the columns past out untouched; the workspace is reused.
  const int64_t ldy = w.out + 3;
  std::vector<float> residual(static_cast<size_t>(rows * ldy));
  for (float& v : residual) v = normal(rng);
  std::vector<float> acc = residual;
  BlockProjection(x.data(), rows, w, bias.data(), acc.data(), ldy, true, &workspace, team);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < ldy; ++j) {
      const size_t i = static_cast<size_t>(r * ldy + j);
      const float expected = j < w.out ? (residual[i] + want[static_cast<size_t>(r * w.out + j)]) +
                                             bias[static_cast<size_t>(j)]
                                       : residual[i];
      ASSERT_EQ(acc[i], expected) << "row " << r << " column " << j;
    }
  }
}

TEST_P(BlockProjectionTest, DecodeRowsAreOneRowBlock) {
  at::set_num_threads(GetParam());
  std::mt19937 rng(11);
  TestMatrix m = RandomMatrix(quant::BlockType::kQ4_0, 100, 256, rng);
  Projection w;
  w.in = 256;
  w.out = 100;
  w.blocks.push_back(BlockPart{m.matrix, 0});
  std::vector<float> x(3 * 256);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : x) v = normal(rng);
  std::vector<float> want(3 * 100), got(3 * 100);
  Untiled(x, 3, w.blocks[0], want, 100);
  BlockProjectionWorkspace workspace;
  WorkerTeam team(2);  // two threads: the pieces are claimed concurrently
  BlockProjection(x.data(), 3, w, nullptr, got.data(), 100, false, &workspace, team);
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Threads, BlockProjectionTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace infera::llm
