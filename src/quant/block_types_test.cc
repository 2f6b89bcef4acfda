// The type table, hand-made blocks of every layout decoded as block_types.h describes,
// and the reference quantisers' round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "api/float16.h"
#include "quant/block_types.h"
#include "quant/dequantize.h"
#include "quant/quantize.h"

namespace infera::quant {
namespace {

void PutHalf(uint8_t* p, float v) {
  const uint16_t h = FloatToHalf(v);
  std::memcpy(p, &h, 2);
}

TEST(BlockTypesTest, TableHasGgufIdsAndSizes) {
  struct Row {
    uint32_t id;
    const char* name;
    int64_t elements, bytes;
  } expected[] = {{0, "F32", 1, 4},       {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},   {3, "Q4_1", 32, 20},
                  {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},    {8, "Q8_0", 32, 34},   {12, "Q4_K", 256, 144},
                  {13, "Q5_K", 256, 176}, {14, "Q6_K", 256, 210}, {30, "BF16", 1, 2}};
  size_t count = 0;
  AllBlockTypes(&count);
  EXPECT_EQ(count, std::size(expected));
  for (const Row& row : expected) {
    const auto type = BlockTypeFromId(row.id);
    ASSERT_TRUE(type.has_value()) << row.name;
    EXPECT_STREQ(Name(*type), row.name);
    EXPECT_EQ(Info(*type).block_elements, row.elements);
    EXPECT_EQ(Info(*type).block_bytes, row.bytes);
    EXPECT_EQ(BlockTypeFromName(row.name), type);
  }
  EXPECT_FALSE(BlockTypeFromId(10).has_value());  // Q2_K: no kernel here
  EXPECT_FALSE(BlockTypeFromName("Q2_K").has_value());
}

TEST(BlockTypesTest, RowLengthMustBeWholeBlocks) {
  EXPECT_EQ(CheckRowLength(BlockType::kQ4_0, 64), "");
  EXPECT_EQ(CheckRowLength(BlockType::kQ4_0, 100), "Q4_0 row length 100 is not a multiple of its block size 32");
  EXPECT_EQ(CheckRowLength(BlockType::kQ6_K, 128), "Q6_K row length 128 is not a multiple of its block size 256");
  EXPECT_EQ(CheckRowLength(BlockType::kF16, 0), "F16 row length must be positive, got 0");
  EXPECT_EQ(CheckRowLength(BlockType::kF32, 3), "");
  EXPECT_EQ(RowBytes(BlockType::kQ4_K, 2048), 8 * 144);
}

TEST(BlockTypesTest, DecodesHandMade32ElementBlocks) {
  float out[32];
  uint8_t q4_0[18] = {};
  PutHalf(q4_0, 0.5f);
  q4_0[2] = 0x1F;  // element 0: 15 → 0.5·7, element 16: 1 → 0.5·(−7)
  DequantizeRow(BlockType::kQ4_0, q4_0, 32, out);
  EXPECT_EQ(out[0], 3.5f);
  EXPECT_EQ(out[16], -3.5f);
  EXPECT_EQ(out[1], -4.0f);

  uint8_t q4_1[20] = {};
  PutHalf(q4_1, 2.0f);
  PutHalf(q4_1 + 2, -1.0f);
  q4_1[4 + 15] = 0x30;  // element 15: 0, element 31: 3
  DequantizeRow(BlockType::kQ4_1, q4_1, 32, out);
  EXPECT_EQ(out[15], -1.0f);
  EXPECT_EQ(out[31], 5.0f);

  uint8_t q5_0[22] = {};
  PutHalf(q5_0, 1.0f);
  q5_0[2 + 3] = 0x80;  // high bit of element 31
  q5_0[6 + 15] = 0xF0;  // element 31 low nibble 15 → 31 − 16 = 15
  DequantizeRow(BlockType::kQ5_0, q5_0, 32, out);
  EXPECT_EQ(out[31], 15.0f);
  EXPECT_EQ(out[0], -16.0f);

  uint8_t q5_1[24] = {};
  PutHalf(q5_1, 1.0f);
  PutHalf(q5_1 + 2, 0.25f);
  q5_1[4] = 0x01;  // high bit of element 0
  DequantizeRow(BlockType::kQ5_1, q5_1, 32, out);
  EXPECT_EQ(out[0], 16.25f);
  EXPECT_EQ(out[1], 0.25f);

  uint8_t q8_0[34] = {};
  PutHalf(q8_0, 0.25f);
  q8_0[2 + 5] = static_cast<uint8_t>(-128);
  DequantizeRow(BlockType::kQ8_0, q8_0, 32, out);
  EXPECT_EQ(out[5], -32.0f);
}

TEST(BlockTypesTest, DecodesHandMadeKBlocks) {
  float out[256];
  uint8_t q4k[144] = {};
  PutHalf(q4k, 1.0f);
  PutHalf(q4k + 2, 0.5f);
  // Sub-block 0: scale 3, min 2; sub-block 5: scale 33 = 0b100001, min 17 = 0b010001.
  q4k[4 + 0] = 3;
  q4k[4 + 4] = 2;
  q4k[4 + 9] = (33 & 15) | (17 & 15) << 4;  // b[s + 4] for s = 5
  q4k[4 + 1] |= (33 >> 4) << 6;             // b[s − 4]: high bits of the scale
  q4k[4 + 5] |= (17 >> 4) << 6;             // b[s]: high bits of the min
  q4k[16 + 0] = 0x0A;                       // element 0: 10
  q4k[16 + 64 + 3] = 0x70;                  // element 160 + 3 (chunk 2, upper half): 7
  DequantizeRow(BlockType::kQ4_K, q4k, 256, out);
  EXPECT_EQ(out[0], 3.0f * 10.0f - 1.0f);
  EXPECT_EQ(out[1], -1.0f);
  EXPECT_EQ(out[163], 33.0f * 7.0f - 8.5f);

  uint8_t q5k[176] = {};
  PutHalf(q5k, 1.0f);
  PutHalf(q5k + 2, 1.0f);
  q5k[4 + 3] = 1;             // sub-block 3: scale 1, min 0
  q5k[16 + 4] = 1 << 3;       // qh[4] bit 2c + 1 with c = 1: element 64 + 32 + 4
  q5k[48 + 32 + 4] = 0x20;    // its low nibble 2
  DequantizeRow(BlockType::kQ5_K, q5k, 256, out);
  EXPECT_EQ(out[100], 18.0f);

  uint8_t q6k[210] = {};
  PutHalf(q6k + 208, 0.5f);
  for (int s = 0; s < 16; ++s) q6k[192 + s] = static_cast<uint8_t>(s - 8);
  // Element 128 + 64 + 1 (half 1, part 2): ql[64 + 1] high nibble, qh[32 + 1] bits 4..5.
  q6k[64 + 1] = 0x50;
  q6k[128 + 32 + 1] = 0x30;  // u = 5 | 3 << 4 = 53 → 21
  DequantizeRow(BlockType::kQ6_K, q6k, 256, out);
  EXPECT_EQ(out[193], 0.5f * static_cast<float>(12 - 8) * 21.0f);
  EXPECT_EQ(out[0], 0.5f * -8.0f * -32.0f);
}

// Quantise → dequantise stays within a type-specific fraction of the row's amax.
TEST(BlockTypesTest, ReferenceQuantisersRoundTrip) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t k = 1024;
  std::vector<float> x(k), back(k);
  for (float& v : x) v = normal(rng);
  float amax = 0.0f;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  struct Case {
    BlockType type;
    // max |x − back| / amax: half a step (range / levels), or up to a whole step where the
    // symmetric types clamp the side opposite their largest element (d = v / −8: +8 is out of range)
    float tolerance;
  } cases[] = {{BlockType::kF32, 0.0f},    {BlockType::kF16, 1e-3f},   {BlockType::kBF16, 4e-3f},
               {BlockType::kQ8_0, 0.005f}, {BlockType::kQ4_0, 0.13f},  {BlockType::kQ4_1, 0.07f},
               {BlockType::kQ5_0, 0.065f}, {BlockType::kQ5_1, 0.035f}, {BlockType::kQ4_K, 0.12f},
               {BlockType::kQ5_K, 0.06f},  {BlockType::kQ6_K, 0.03f}};
  for (const Case& c : cases) {
    std::vector<uint8_t> blocks(static_cast<size_t>(RowBytes(c.type, k)));
    QuantizeRow(c.type, x.data(), k, blocks.data());
    DequantizeRow(c.type, blocks.data(), k, back.data());
    float worst = 0.0f;
    for (int64_t i = 0; i < k; ++i) worst = std::max(worst, std::fabs(x[i] - back[i]));
    EXPECT_LE(worst, c.tolerance * amax) << Name(c.type);
    if (c.type != BlockType::kF32) {
      EXPECT_GT(worst, 0.0f) << Name(c.type);
    }
  }
  // An all-zero row quantises to zeros (zero steps), not NaN.
  std::vector<float> zeros(256, 0.0f);
  for (const Case& c : cases) {
    std::vector<uint8_t> blocks(static_cast<size_t>(RowBytes(c.type, 256)));
    QuantizeRow(c.type, zeros.data(), 256, blocks.data());
    DequantizeRow(c.type, blocks.data(), 256, back.data());
    for (int i = 0; i < 256; ++i) ASSERT_EQ(back[i], 0.0f) << Name(c.type);
  }
}

}  // namespace
}  // namespace infera::quant
