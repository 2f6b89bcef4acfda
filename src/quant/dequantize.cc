#include "quant/dequantize.h"

#include <cstring>

#include "api/float16.h"

namespace infera::quant {
namespace {

float Half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return HalfToFloat(h);
}

// The 4-bit value of element j (0..31) of a 32-element block's 16 packed bytes.
int Nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4; }
// Bit j of the little-endian 32-bit high-bit word of Q5_0/Q5_1.
int HighBit(const uint8_t* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; }

}  // namespace

void UnpackKScaleMin(const uint8_t* b, int s, uint8_t* scale, uint8_t* min) {
  if (s < 4) {
    *scale = b[s] & 63;
    *min = b[s + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((b[s + 4] & 15) | ((b[s - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((b[s + 4] >> 4) | ((b[s] >> 6) << 4));
  }
}

void DequantizeRow(BlockType type, const void* row, int64_t k, float* out) {
  const auto* p = static_cast<const uint8_t*>(row);
  const BlockTypeInfo& info = Info(type);
  const int64_t blocks = k / info.block_elements;
  for (int64_t b = 0; b < blocks; ++b, p += info.block_bytes) {
    float* y = out + b * info.block_elements;
    switch (type) {
      case BlockType::kF32:
        std::memcpy(y, p, 4);
        break;
      case BlockType::kF16:
        y[0] = Half(p);
        break;
      case BlockType::kBF16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        y[0] = Bf16ToFloat(h);
        break;
      }
      case BlockType::kQ8_0: {
        const float d = Half(p);
        for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(static_cast<int8_t>(p[2 + j]));
        break;
      }
      case BlockType::kQ4_0: {
        const float d = Half(p);
        for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(Nibble(p + 2, j) - 8);
        break;
      }
      case BlockType::kQ4_1: {
        const float d = Half(p), m = Half(p + 2);
        for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(Nibble(p + 4, j)) + m;
        break;
      }
      case BlockType::kQ5_0: {
        const float d = Half(p);
        for (int j = 0; j < 32; ++j) {
          y[j] = d * static_cast<float>((Nibble(p + 6, j) | HighBit(p + 2, j) << 4) - 16);
        }
        break;
      }
      case BlockType::kQ5_1: {
        const float d = Half(p), m = Half(p + 2);
        for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(Nibble(p + 8, j) | HighBit(p + 4, j) << 4) + m;
        break;
      }
      case BlockType::kQ4_K:
      case BlockType::kQ5_K: {
        const bool five = type == BlockType::kQ5_K;
        const float d = Half(p), dmin = Half(p + 2);
        const uint8_t* scales = p + 4;
        const uint8_t* qh = p + 16;
        const uint8_t* qs = five ? p + 48 : p + 16;
        for (int e = 0; e < 256; ++e) {
          const int c = e / 64, i = e % 32, upper = (e % 64) / 32;
          uint8_t sc, mn;
          UnpackKScaleMin(scales, 2 * c + upper, &sc, &mn);
          int u = upper ? qs[32 * c + i] >> 4 : qs[32 * c + i] & 15;
          if (five) u |= ((qh[i] >> (2 * c + upper)) & 1) << 4;
          y[e] = (d * static_cast<float>(sc)) * static_cast<float>(u) - dmin * static_cast<float>(mn);
        }
        break;
      }
      case BlockType::kQ6_K: {
        const uint8_t* ql = p;
        const uint8_t* qh = p + 128;
        const auto* scales = reinterpret_cast<const int8_t*>(p + 192);
        const float d = Half(p + 208);
        for (int e = 0; e < 256; ++e) {
          const int h = e / 128, part = (e % 128) / 32, i = e % 32;
          const uint8_t low = ql[64 * h + 32 * (part & 1) + i];
          const int u = (part < 2 ? low & 15 : low >> 4) | ((qh[32 * h + i] >> (2 * part)) & 3) << 4;
          y[e] = (d * static_cast<float>(scales[e / 16])) * static_cast<float>(u - 32);
        }
        break;
      }
    }
  }
}

}  // namespace infera::quant
