#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "api/float16.h"

namespace infera::quant {
namespace {

// Stores half(v) at p and returns the value it holds, as float.
float PutHalf(uint8_t* p, float v) {
  const uint16_t h = FloatToHalf(v);
  std::memcpy(p, &h, 2);
  return HalfToFloat(h);
}

int RoundClamp(float v, int lo, int hi) {
  const float r = std::nearbyint(v);
  if (!(r >= static_cast<float>(lo))) return lo;  // NaN → lo
  if (r > static_cast<float>(hi)) return hi;
  return static_cast<int>(r);
}

// The element of largest magnitude (the first of equals).
float LargestMagnitude(const float* x, int n) {
  float amax = 0.0f, v = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      v = x[j];
    }
  }
  return v;
}

// 32-element symmetric blocks: Q4_0 (levels 16) and Q5_0 (32). Returns the unsigned codes.
void Symmetric32(const float* x, int levels, uint8_t* d_out, int* u) {
  const int zero = levels / 2;
  const float d = PutHalf(d_out, LargestMagnitude(x, 32) / static_cast<float>(-zero));
  for (int j = 0; j < 32; ++j) u[j] = d == 0.0f ? zero : RoundClamp(x[j] / d, -zero, zero - 1) + zero;
}

// 32-element blocks with a minimum: Q4_1 (levels 16) and Q5_1 (32).
void Affine32(const float* x, int levels, uint8_t* dm_out, int* u) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < 32; ++j) {
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
  }
  const float d = PutHalf(dm_out, (hi - lo) / static_cast<float>(levels - 1));
  const float m = PutHalf(dm_out + 2, lo);
  for (int j = 0; j < 32; ++j) u[j] = d == 0.0f ? 0 : RoundClamp((x[j] - m) / d, 0, levels - 1);
}

void PackNibbles(const int* u, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((u[j] & 15) | (u[j + 16] & 15) << 4);
}
void PackHighBits(const int* u, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < 32; ++j) bits |= static_cast<uint32_t>((u[j] >> 4) & 1) << j;
  for (int i = 0; i < 4; ++i) qh[i] = static_cast<uint8_t>(bits >> (8 * i));
}

void QuantizeK45(const float* x, bool five, uint8_t* p) {
  const int levels = five ? 32 : 16;
  float scale[8], minv[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int s = 0; s < 8; ++s) {
    float lo = 0.0f, hi = x[32 * s];
    for (int j = 0; j < 32; ++j) {
      lo = std::min(lo, x[32 * s + j]);
      hi = std::max(hi, x[32 * s + j]);
    }
    scale[s] = (hi - lo) / static_cast<float>(levels - 1);
    minv[s] = -lo;
    max_scale = std::max(max_scale, scale[s]);
    max_min = std::max(max_min, minv[s]);
  }
  const float d = PutHalf(p, max_scale / 63.0f);
  const float dmin = PutHalf(p + 2, max_min / 63.0f);
  uint8_t sc[8], mn[8];
  for (int s = 0; s < 8; ++s) {
    sc[s] = static_cast<uint8_t>(d == 0.0f ? 0 : RoundClamp(scale[s] / d, 0, 63));
    mn[s] = static_cast<uint8_t>(dmin == 0.0f ? 0 : RoundClamp(minv[s] / dmin, 0, 63));
  }
  uint8_t* b = p + 4;
  for (int s = 0; s < 4; ++s) {
    b[s] = static_cast<uint8_t>((sc[s] & 63) | (sc[s + 4] >> 4) << 6);
    b[s + 4] = static_cast<uint8_t>((mn[s] & 63) | (mn[s + 4] >> 4) << 6);
    b[s + 8] = static_cast<uint8_t>((sc[s + 4] & 15) | (mn[s + 4] & 15) << 4);
  }
  uint8_t* qh = p + 16;
  uint8_t* qs = five ? p + 48 : p + 16;
  if (five) std::memset(qh, 0, 32);
  std::memset(qs, 0, 128);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32, c = e / 64, i = e % 32, upper = s & 1;
    const float step = d * static_cast<float>(sc[s]);
    const float off = dmin * static_cast<float>(mn[s]);
    const int u = step == 0.0f ? 0 : RoundClamp((x[e] + off) / step, 0, levels - 1);
    qs[32 * c + i] |= static_cast<uint8_t>((u & 15) << (4 * upper));
    if (five) qh[i] |= static_cast<uint8_t>(((u >> 4) & 1) << (2 * c + upper));
  }
}

void QuantizeQ6K(const float* x, uint8_t* p) {
  float scale[16];
  float amax = 0.0f;
  for (int s = 0; s < 16; ++s) {
    scale[s] = LargestMagnitude(x + 16 * s, 16) / -32.0f;
    amax = std::max(amax, std::fabs(scale[s]));
  }
  const float d = PutHalf(p + 208, amax / 127.0f);
  auto* scales = reinterpret_cast<int8_t*>(p + 192);
  for (int s = 0; s < 16; ++s) scales[s] = static_cast<int8_t>(d == 0.0f ? 0 : RoundClamp(scale[s] / d, -127, 127));
  uint8_t* ql = p;
  uint8_t* qh = p + 128;
  std::memset(p, 0, 192);
  for (int e = 0; e < 256; ++e) {
    const float step = d * static_cast<float>(scales[e / 16]);
    const int u = (step == 0.0f ? 0 : RoundClamp(x[e] / step, -32, 31)) + 32;
    const int h = e / 128, part = (e % 128) / 32, i = e % 32;
    ql[64 * h + 32 * (part & 1) + i] |= static_cast<uint8_t>((u & 15) << (part < 2 ? 0 : 4));
    qh[32 * h + i] |= static_cast<uint8_t>((u >> 4) << (2 * part));
  }
}

}  // namespace

void QuantizeRow(BlockType type, const float* x, int64_t k, void* out) {
  auto* p = static_cast<uint8_t*>(out);
  const BlockTypeInfo& info = Info(type);
  const int64_t blocks = k / info.block_elements;
  int u[32];
  for (int64_t b = 0; b < blocks; ++b, p += info.block_bytes, x += info.block_elements) {
    switch (type) {
      case BlockType::kF32:
        std::memcpy(p, x, 4);
        break;
      case BlockType::kF16:
        PutHalf(p, x[0]);
        break;
      case BlockType::kBF16: {
        const uint16_t h = FloatToBf16(x[0]);
        std::memcpy(p, &h, 2);
        break;
      }
      case BlockType::kQ8_0: {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = PutHalf(p, amax / 127.0f);
        for (int j = 0; j < 32; ++j) {
          p[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(d == 0.0f ? 0 : RoundClamp(x[j] / d, -127, 127)));
        }
        break;
      }
      case BlockType::kQ4_0:
        Symmetric32(x, 16, p, u);
        PackNibbles(u, p + 2);
        break;
      case BlockType::kQ5_0:
        Symmetric32(x, 32, p, u);
        PackHighBits(u, p + 2);
        PackNibbles(u, p + 6);
        break;
      case BlockType::kQ4_1:
        Affine32(x, 16, p, u);
        PackNibbles(u, p + 4);
        break;
      case BlockType::kQ5_1:
        Affine32(x, 32, p, u);
        PackHighBits(u, p + 4);
        PackNibbles(u, p + 8);
        break;
      case BlockType::kQ4_K:
        QuantizeK45(x, false, p);
        break;
      case BlockType::kQ5_K:
        QuantizeK45(x, true, p);
        break;
      case BlockType::kQ6_K:
        QuantizeQ6K(x, p);
        break;
    }
  }
}

}  // namespace infera::quant
