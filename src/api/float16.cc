#include "api/float16.h"

namespace infera {

uint16_t FloatToHalf(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;        // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;       // overflow (>= 65520) and inf
  if (abs >= 0x38800000u) {                            // normal half
    // Rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits.
    uint32_t v = abs - 0x38000000u;
    v += 0x0fffu + ((v >> 13) & 1u);
    return sign | static_cast<uint16_t>(v >> 13);
  }
  if (abs < 0x33000000u) return sign;                  // underflows to zero (< 2^-25)
  // Subnormal half: shift the implicit-1 mantissa right and round to nearest even.
  const uint32_t exp = abs >> 23;
  const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exp;                    // 14 + (113 - exp) - ... in [14, 24]
  uint32_t half_mant = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
  return sign | static_cast<uint16_t>(half_mant);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  if (exp != 0) return BitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return BitsToFloat(sign);
  // Subnormal: normalise.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return BitsToFloat(sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13));
}

}  // namespace infera
