// The reference kernel: block_matmul.h's math (both paths) written out with plain loops, one output
// element at a time. It is the portable fallback and the definition the SIMD kernels are
// tested against bit for bit. Built with -ffp-contract=off: every fma is std::fma.
#include <cmath>
#include <cstring>

#include "api/float16.h"
#include "quant/block_matmul_kernels.h"
#include "quant/dequantize.h"

namespace infera::quant::block_matmul_internal {
namespace {

float Half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return HalfToFloat(h);
}

float Reduce16(const float* a) {
  float t8[8], t4[4], t2[2];
  for (int i = 0; i < 8; ++i) t8[i] = a[i] + a[i + 8];
  for (int i = 0; i < 4; ++i) t4[i] = t8[i] + t8[i + 4];
  for (int i = 0; i < 2; ++i) t2[i] = t4[i] + t4[i + 2];
  return t2[0] + t2[1];
}

// One weight block of a 32-element type: signed codes w_int, scale d, min m.
struct Block32 {
  int code[32];
  float d = 0.0f, m = 0.0f;
};

Block32 Decode32(BlockType type, const uint8_t* p) {
  Block32 b;
  auto nibble = [](const uint8_t* qs, int j) { return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4; };
  auto high = [](const uint8_t* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; };
  b.d = Half(p);
  for (int j = 0; j < 32; ++j) {
    switch (type) {
      case BlockType::kQ8_0:
        b.code[j] = static_cast<int8_t>(p[2 + j]);
        break;
      case BlockType::kQ4_0:
        b.code[j] = nibble(p + 2, j) - 8;
        break;
      case BlockType::kQ4_1:
        b.code[j] = nibble(p + 4, j);
        break;
      case BlockType::kQ5_0:
        b.code[j] = (nibble(p + 6, j) | high(p + 2, j) << 4) - 16;
        break;
      case BlockType::kQ5_1:
        b.code[j] = nibble(p + 8, j) | high(p + 4, j) << 4;
        break;
      default:
        b.code[j] = 0;
    }
  }
  if (type == BlockType::kQ4_1 || type == BlockType::kQ5_1) b.m = Half(p + 2);
  return b;
}

// One K-quant block: signed codes, per-element sub-block scale, d, dmin, mins.
struct BlockK {
  int code[256];
  int scale[256];
  int min[8] = {};
  float d = 0.0f, dmin = 0.0f;
};

BlockK DecodeK(BlockType type, const uint8_t* p) {
  BlockK b;
  if (type == BlockType::kQ6_K) {
    const auto* scales = reinterpret_cast<const int8_t*>(p + 192);
    b.d = Half(p + 208);
    for (int e = 0; e < 256; ++e) {
      const int h = e / 128, part = (e % 128) / 32, i = e % 32;
      const uint8_t low = p[64 * h + 32 * (part & 1) + i];
      const int u = (part < 2 ? low & 15 : low >> 4) | ((p[128 + 32 * h + i] >> (2 * part)) & 3) << 4;
      b.code[e] = u - 32;
      b.scale[e] = scales[e / 16];
    }
    return b;
  }
  const bool five = type == BlockType::kQ5_K;
  b.d = Half(p);
  b.dmin = Half(p + 2);
  const uint8_t* qh = p + 16;
  const uint8_t* qs = five ? p + 48 : p + 16;
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, mn;
    UnpackKScaleMin(p + 4, s, &sc, &mn);
    b.min[s] = mn;
    for (int e = 32 * s; e < 32 * s + 32; ++e) b.scale[e] = sc;
  }
  for (int e = 0; e < 256; ++e) {
    const int c = e / 64, i = e % 32, upper = (e % 64) / 32;
    int u = upper ? qs[32 * c + i] >> 4 : qs[32 * c + i] & 15;
    if (five) u |= ((qh[i] >> (2 * c + upper)) & 1) << 4;
    b.code[e] = u;
  }
  return b;
}

float FloatWeight(BlockType type, const uint8_t* row, int64_t k) {
  switch (type) {
    case BlockType::kF32: {
      float v;
      std::memcpy(&v, row + 4 * k, 4);
      return v;
    }
    case BlockType::kF16:
      return Half(row + 2 * k);
    default: {
      uint16_t h;
      std::memcpy(&h, row + 2 * k, 2);
      return Bf16ToFloat(h);
    }
  }
}

float Dot(const QuantizedActivations& a, int64_t i, const BlockMatrix& w, int64_t j) {
  const BlockType type = w.type();
  const uint8_t* row = w.row(j);
  float acc[16] = {};
  float accm = 0.0f;
  if (!IsQuantized(type)) {
    const float* x = a.x.data() + i * a.kp;
    for (int64_t k = 0; k < a.k; ++k) acc[k % 16] = std::fma(x[k], FloatWeight(type, row, k), acc[k % 16]);
    return Reduce16(acc);
  }
  const int64_t block_bytes = Info(type).block_bytes;
  if (Info(type).block_elements == 32) {
    const bool with_min = type == BlockType::kQ4_1 || type == BlockType::kQ5_1;
    const int64_t blocks = a.k / 32;
    for (int64_t c = 0; c < a.kp / 64; ++c) {
      const int8_t* q = a.q(i, c);
      for (int h = 0; h < 2; ++h) {
        const int64_t b = 2 * c + h;
        Block32 wb;  // a missing second block: codes and scales 0
        if (b < blocks) {
          wb = Decode32(type, row + b * block_bytes);
        } else {
          std::memset(wb.code, 0, sizeof wb.code);
        }
        const float dx = a.d32[i * a.kp / 32 + b];  // 0 for a missing block
        for (int l = 8 * h; l < 8 * h + 8; ++l) {
          int32_t ilane = 0;
          for (int e = 0; e < 4; ++e) ilane += wb.code[4 * (l - 8 * h) + e] * q[4 * l + e];
          acc[l] = std::fma(wb.d * dx, static_cast<float>(ilane), acc[l]);
        }
        if (with_min && b < blocks) accm = std::fma(wb.m, a.dsum32[i * a.kp / 32 + b], accm);
      }
    }
    return with_min ? Reduce16(acc) + accm : Reduce16(acc);
  }
  for (int64_t b = 0; b < a.k / 256; ++b) {
    const BlockK wb = DecodeK(type, row + b * block_bytes);
    const float dx = a.d256[i * a.kp / 256 + b];
    int32_t ilane[16] = {};
    for (int c = 0; c < 4; ++c) {
      const int8_t* qc = a.q(i, 4 * b + c);
      for (int l = 0; l < 16; ++l) {
        const int e0 = 64 * c + 4 * l;
        int32_t dot = 0;
        for (int e = 0; e < 4; ++e) dot += wb.code[e0 + e] * qc[4 * l + e];
        ilane[l] += wb.scale[e0] * dot;
      }
    }
    for (int l = 0; l < 16; ++l) acc[l] = std::fma(wb.d * dx, static_cast<float>(ilane[l]), acc[l]);
    if (type != BlockType::kQ6_K) {
      int32_t isum_m = 0;
      for (int s = 0; s < 8; ++s) isum_m += wb.min[s] * a.sum32[i * a.kp / 32 + 8 * b + s];
      accm = std::fma(wb.dmin * dx, static_cast<float>(isum_m), accm);
    }
  }
  return type == BlockType::kQ6_K ? Reduce16(acc) : Reduce16(acc) - accm;
}

// The block-sums layout (block_matmul.h): code e of row i, and per-row value idx of a
// per-tile table with `per_tile` entries per row.
int TileQ(const QuantizedActivations& a, int64_t i, int64_t e) {
  return a.q_tiles[static_cast<size_t>((((i / 16) * (a.k / 4) + e / 4) * 16 + i % 16) * 4 + e % 4)];
}
template <typename V>
V TileValue(const std::vector<V>& table, int64_t per_tile, int64_t i, int64_t idx) {
  return table[static_cast<size_t>(((i / 16) * per_tile + idx) * 16 + i % 16)];
}

// The block-sums contract: one exact integer sum per weight block (K-quants: per
// super-block, sub-block scales applied in integers), one fma per block.
float DotBlockSums(const QuantizedActivations& a, int64_t i, const BlockMatrix& w, int64_t j) {
  const BlockType type = w.type();
  const uint8_t* row = w.row(j);
  const int64_t block_bytes = Info(type).block_bytes;
  float acc = 0.0f, accm = 0.0f;
  if (Info(type).block_elements == 32) {
    const bool with_min = type == BlockType::kQ4_1 || type == BlockType::kQ5_1;
    const int64_t blocks = a.k / 32;
    for (int64_t b = 0; b < blocks; ++b) {
      const Block32 wb = Decode32(type, row + b * block_bytes);
      int32_t sum = 0;
      for (int e = 0; e < 32; ++e) sum += wb.code[e] * TileQ(a, i, 32 * b + e);
      acc = std::fma(wb.d * TileValue(a.d_tiles, blocks, i, b), static_cast<float>(sum), acc);
      if (with_min) accm = std::fma(wb.m, TileValue(a.dsum_tiles, blocks, i, b), accm);
    }
    return with_min ? acc + accm : acc;
  }
  const int64_t blocks = a.k / 256;
  for (int64_t b = 0; b < blocks; ++b) {
    const BlockK wb = DecodeK(type, row + b * block_bytes);
    const float dx = TileValue(a.d_tiles, blocks, i, b);
    int32_t sum = 0;
    for (int e = 0; e < 256; ++e) sum += wb.scale[e] * (wb.code[e] * TileQ(a, i, 256 * b + e));
    acc = std::fma(wb.d * dx, static_cast<float>(sum), acc);
    if (type != BlockType::kQ6_K) {
      int32_t isum_m = 0;
      for (int s = 0; s < 8; ++s) isum_m += wb.min[s] * TileValue(a.sum_tiles, a.k / 32, i, 8 * b + s);
      accm = std::fma(wb.dmin * dx, static_cast<float>(isum_m), accm);
    }
  }
  return type == BlockType::kQ6_K ? acc : acc - accm;
}

}  // namespace

void ReferenceColumns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0,
                      int64_t c1) {
  for (int64_t j = c0; j < c1; ++j) {
    for (int64_t i = 0; i < a.m; ++i) {
      y[i * ldy + j] = a.path == BlockPath::kBlockSums ? DotBlockSums(a, i, w, j) : Dot(a, i, w, j);
    }
  }
}

}  // namespace infera::quant::block_matmul_internal
