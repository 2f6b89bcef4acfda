#include "api/float16.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"

namespace infera {
namespace {

float Pow2(int e) { return std::ldexp(1.0f, e); }
bool IsHalfNaN(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0; }
bool IsBf16NaN(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x007fu) != 0; }

TEST(Float16Test, HalfExactValues) {
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(0.5f), 0x3800);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);   // largest finite
  EXPECT_EQ(FloatToHalf(Pow2(-14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalf(Pow2(-24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(1023 * Pow2(-24)), 0x03ff);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);

  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(HalfToFloat(0x0001), Pow2(-24));
  EXPECT_EQ(HalfToFloat(0x0200), Pow2(-15));
  EXPECT_EQ(HalfToFloat(0x03ff), 1023 * Pow2(-24));
  EXPECT_EQ(HalfToFloat(0x8001), -Pow2(-24));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_EQ(HalfToFloat(0x8000), 0.0f);
  EXPECT_EQ(HalfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(HalfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(Float16Test, HalfRoundsToNearestEven) {
  const float ulp = Pow2(-10);                         // half's spacing in [1, 2)
  EXPECT_EQ(FloatToHalf(1.0f + ulp / 2), 0x3c00);      // tie -> even (down)
  EXPECT_EQ(FloatToHalf(1.0f + 3 * ulp / 2), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(FloatToHalf(std::nextafter(1.0f + ulp / 2, 2.0f)), 0x3c01);
  EXPECT_EQ(FloatToHalf(std::nextafter(1.0f + ulp / 2, 0.0f)), 0x3c00);
  EXPECT_EQ(FloatToHalf(-(1.0f + 3 * ulp / 2)), 0xbc02);
  // A tie that carries into the exponent: 2 - ulp/2 lies halfway between 0x3fff (odd)
  // and 0x4000 (2.0), so it rounds up.
  EXPECT_EQ(FloatToHalf(2.0f - ulp / 2), 0x4000);
}

TEST(Float16Test, HalfSubnormalsAndUnderflow) {
  const float tiny = Pow2(-24);
  EXPECT_EQ(FloatToHalf(tiny / 2), 0x0000);                        // tie -> even (zero)
  EXPECT_EQ(FloatToHalf(std::nextafter(tiny / 2, 1.0f)), 0x0001);  // just above the tie
  EXPECT_EQ(FloatToHalf(-tiny / 2), 0x8000);                       // keeps the sign
  EXPECT_EQ(FloatToHalf(1.5f * tiny), 0x0002);                     // tie -> even (up)
  EXPECT_EQ(FloatToHalf(2.5f * tiny), 0x0002);                     // tie -> even (down)
  EXPECT_EQ(FloatToHalf(Pow2(-30)), 0x0000);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  // Halfway between the largest subnormal (0x03ff) and the smallest normal: rounds up.
  EXPECT_EQ(FloatToHalf(Pow2(-14) - tiny / 2), 0x0400);
}

TEST(Float16Test, HalfOverflowsToInfinity) {
  EXPECT_EQ(FloatToHalf(65519.996f), 0x7bff);  // below the halfway point 65520
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);    // the tie rounds to even: infinity
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e10f), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::max()), 0x7c00);
}

TEST(Float16Test, HalfNaNStaysNaN) {
  EXPECT_TRUE(IsHalfNaN(FloatToHalf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(IsHalfNaN(FloatToHalf(std::numeric_limits<float>::signaling_NaN())));
  EXPECT_TRUE(IsHalfNaN(FloatToHalf(BitsToFloat(0x7f800001u))));  // low payload bits only
  EXPECT_TRUE(IsHalfNaN(FloatToHalf(BitsToFloat(0xffc00000u))));
  EXPECT_EQ(FloatToHalf(BitsToFloat(0xffc00000u)) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7c01)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0xfdff)));
}

// Every half value survives half -> float -> half bit for bit (NaNs stay NaN).
TEST(Float16Test, ExhaustiveHalfRoundTrip) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t half = static_cast<uint16_t>(h);
    const float f = HalfToFloat(half);
    if (IsHalfNaN(half)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_TRUE(IsHalfNaN(FloatToHalf(f))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(FloatToHalf(f), half) << std::hex << h;
    ASSERT_EQ(FloatBits(HalfToFloat(FloatToHalf(f))), FloatBits(f)) << std::hex << h;
  }
}

#if defined(__FLT16_MAX__)
// Compares FloatToHalf with the compiler's _Float16 conversion (IEEE round to nearest even)
// at every rounding boundary: for each pair of adjacent halves, the exact midpoint and the
// floats on either side of it, plus a strided sweep over all float bit patterns.
TEST(Float16Test, MatchesCompilerConversion) {
  auto reference = [](float f) {
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    return bits;
  };
  auto check = [&](float f) {
    if (std::isnan(f)) return;
    ASSERT_EQ(FloatToHalf(f), reference(f)) << std::hexfloat << f;
  };
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    for (float sign : {1.0f, -1.0f}) {
      const float lo = HalfToFloat(static_cast<uint16_t>(h));
      const float hi = h + 1 == 0x7c00 ? 65536.0f : HalfToFloat(static_cast<uint16_t>(h + 1));
      const float mid = lo + (hi - lo) / 2;  // exact: a float has the bits to spare
      check(sign * mid);
      check(sign * std::nextafter(mid, 0.0f));
      check(sign * std::nextafter(mid, 1e30f));
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 9973) check(BitsToFloat(static_cast<uint32_t>(u)));
}
#endif

TEST(Bfloat16Test, ExactValues) {
  EXPECT_EQ(FloatToBf16(0.0f), 0x0000);
  EXPECT_EQ(FloatToBf16(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xc000);
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(FloatToBf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(Bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToFloat(0x4049), 3.140625f);
  EXPECT_EQ(Bf16ToFloat(0x7f7f), BitsToFloat(0x7f7f0000u));  // largest finite
  EXPECT_EQ(Bf16ToFloat(0x0001), BitsToFloat(0x00010000u));  // a subnormal
}

TEST(Bfloat16Test, RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x3f808000u)), 0x3f80);  // tie -> even (down)
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x3f818000u)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x3f808001u)), 0x3f81);
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x3f807fffu)), 0x3f80);
  EXPECT_EQ(FloatToBf16(BitsToFloat(0xbf818000u)), 0xbf82);
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x3fffffffu)), 0x4000);  // carries into the exponent
}

TEST(Bfloat16Test, SubnormalsOverflowAndNaN) {
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x00008000u)), 0x0000);  // tie -> even (zero)
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x00018000u)), 0x0002);  // tie -> even (up)
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x00008001u)), 0x0001);
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to infinity
  EXPECT_EQ(FloatToBf16(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_TRUE(IsBf16NaN(FloatToBf16(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload sits in the low 16 bits must not truncate to infinity.
  EXPECT_TRUE(IsBf16NaN(FloatToBf16(BitsToFloat(0x7f800001u))));
  EXPECT_TRUE(IsBf16NaN(FloatToBf16(BitsToFloat(0xff80ffffu))));
  EXPECT_EQ(FloatToBf16(BitsToFloat(0xff800001u)) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(0x7fc0)));
  EXPECT_TRUE(std::isnan(Bf16ToFloat(0x7f81)));
}

TEST(Bfloat16Test, ExhaustiveRoundTrip) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const uint16_t bf = static_cast<uint16_t>(b);
    const float f = Bf16ToFloat(bf);
    if (IsBf16NaN(bf)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_TRUE(IsBf16NaN(FloatToBf16(f))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(FloatToBf16(f), bf) << std::hex << b;
  }
}

}  // namespace
}  // namespace infera
