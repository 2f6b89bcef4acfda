// Conversions between float and the 16-bit float formats (IEEE half, bfloat16).
//
// Both round to nearest, ties to even, and keep NaN a NaN (quiet). g++ 12 has no
// std::float16_t / std::bfloat16_t, so the bit manipulation lives here.
#ifndef INFERA_API_FLOAT16_H_
#define INFERA_API_FLOAT16_H_

#include <cstdint>
#include <cstring>

namespace infera {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint16_t FloatToBf16(float f) {
  uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
inline float Bf16ToFloat(uint16_t h) { return BitsToFloat(static_cast<uint32_t>(h) << 16); }

uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);

}  // namespace infera

#endif  // INFERA_API_FLOAT16_H_
