// PackedMatrix: packing a weight into panels (f32, bf16, int8 per column, int4 Q4_0
// groups) and reading one element back. The kernels that multiply by it are in
// packed_matmul.cc; the panel layout both use is packed_layout.h.
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "api/float16.h"
#include "llm/packed_layout.h"
#include "llm/packed_matmul.h"

namespace infera::llm {
namespace {

constexpr int64_t kW = PackedMatrix::kPanelWidth;
constexpr int64_t kInt4Group = PackedMatrix::kInt4Group;
using packed_layout::Bf16Slot;
using packed_layout::kInt4GroupBytes;

}  // namespace

template <typename Get>
PackedMatrix PackedMatrix::Pack(int64_t n, int64_t k, PackedType type, Get get) {
  PackedMatrix m;
  m.n_ = n;
  m.k_ = k;
  m.type_ = type;
  const int64_t groups = (k + kInt4Group - 1) / kInt4Group;
  switch (type) {
    case PackedType::kF32: m.panel_bytes_ = static_cast<size_t>(k * kW) * 4; break;
    case PackedType::kBF16: m.panel_bytes_ = static_cast<size_t>(k * kW) * 2; break;
    case PackedType::kInt8: m.panel_bytes_ = static_cast<size_t>(k * kW + kW * 4); break;
    case PackedType::kInt4: m.panel_bytes_ = static_cast<size_t>(groups * kInt4GroupBytes); break;
  }
  m.bytes_ = static_cast<size_t>(m.num_panels()) * m.panel_bytes_;
  // Matrices of 2 MiB or more sit on transparent huge pages where the kernel allows it
  // (madvise mode): one decode step streams every weight, and with 4 KiB pages that is
  // a TLB miss every 4 KiB.
  const size_t align = m.bytes_ >= (size_t{2} << 20) ? (size_t{2} << 20) : 64;
  const size_t rounded = std::max((m.bytes_ + align - 1) / align * align, align);
  m.data_.reset(static_cast<unsigned char*>(std::aligned_alloc(align, rounded)));
  if (align > 64) madvise(m.data_.get(), rounded, MADV_HUGEPAGE);
  std::memset(m.data_.get(), 0, rounded);
  std::vector<float> column(static_cast<size_t>(k));
  for (int64_t p = 0; p < m.num_panels(); ++p) {
    unsigned char* panel = m.data_.get() + static_cast<size_t>(p) * m.panel_bytes_;
    if (type == PackedType::kInt4) {
      // Padding columns (past n) and padding rows of the last group hold u = 8 (zero).
      for (int64_t g = 0; g < groups; ++g) {
        std::memset(panel + g * kInt4GroupBytes, 0x88, static_cast<size_t>(kInt4Group * (kW / 2)));
      }
    }
    for (int64_t c = 0; c < kW && p * kW + c < n; ++c) {
      const int64_t col = p * kW + c;
      for (int64_t kk = 0; kk < k; ++kk) column[kk] = get(col, kk);
      switch (type) {
        case PackedType::kF32: {
          float* dst = reinterpret_cast<float*>(panel);
          for (int64_t kk = 0; kk < k; ++kk) dst[kk * kW + c] = column[kk];
          break;
        }
        case PackedType::kBF16: {
          uint16_t* dst = reinterpret_cast<uint16_t*>(panel);
          const int64_t slot = Bf16Slot(c);
          for (int64_t kk = 0; kk < k; ++kk) dst[kk * kW + slot] = FloatToBf16(column[kk]);
          break;
        }
        case PackedType::kInt8: {
          // Symmetric per column: scale = absmax / 127, q = round-to-nearest-even(w / scale).
          float absmax = 0;
          for (float v : column) absmax = std::max(absmax, std::fabs(v));
          const float scale = absmax / 127.0f;
          int8_t* dst = reinterpret_cast<int8_t*>(panel);
          for (int64_t kk = 0; kk < k; ++kk) {
            const long q = scale > 0 ? std::lrint(column[kk] / scale) : 0;
            dst[kk * kW + c] = static_cast<int8_t>(std::clamp<long>(q, -127, 127));
          }
          std::memcpy(panel + k * kW + 4 * c, &scale, 4);
          break;
        }
        case PackedType::kInt4: {
          // Q4_0's rule per group: d = (the value of largest magnitude) / -8, so that value
          // maps to -8 exactly; q = round(w / d) clamped to [-8, 7]. d is rounded to fp16
          // first, and the weights are quantised against the rounded d.
          for (int64_t g = 0; g < groups; ++g) {
            const int64_t g0 = g * kInt4Group, rows = std::min(kInt4Group, k - g0);
            float extreme = 0;
            for (int64_t r = 0; r < rows; ++r) {
              if (std::fabs(column[g0 + r]) > std::fabs(extreme)) extreme = column[g0 + r];
            }
            uint16_t half = FloatToHalf(extreme / -8.0f);
            // A finite group beyond fp16's range (|w| > 8 × 65504) saturates d at ±65504
            // (its largest weights clip) instead of an infinite d (0 · inf = NaN).
            if (std::isfinite(extreme) && (half & 0x7fff) == 0x7c00) half = static_cast<uint16_t>((half & 0x8000) | 0x7bff);
            const float d = HalfToFloat(half);
            unsigned char* base = panel + g * kInt4GroupBytes;
            std::memcpy(base + kInt4Group * (kW / 2) + 2 * c, &half, 2);
            const int64_t byte = c % (kW / 2);
            const bool high = c >= kW / 2;
            for (int64_t r = 0; r < rows; ++r) {
              const long q = (d != 0 && std::isfinite(d)) ? std::clamp<long>(std::lrint(column[g0 + r] / d), -8, 7) : 0;
              unsigned char& b = base[r * (kW / 2) + byte];
              const unsigned u = static_cast<unsigned>(q + 8);
              b = high ? static_cast<unsigned char>((b & 0x0f) | (u << 4)) : static_cast<unsigned char>((b & 0xf0) | u);
            }
          }
          break;
        }
      }
    }
  }
  return m;
}

PackedMatrix PackedMatrix::FromOutIn(const float* w, int64_t n, int64_t k, PackedType type) {
  return Pack(n, k, type, [w, k](int64_t col, int64_t kk) { return w[col * k + kk]; });
}

float PackedMatrix::At(int64_t kk, int64_t nn) const {
  const int64_t p = nn / kW, c = nn % kW;
  const unsigned char* base = static_cast<const unsigned char*>(panel(p));
  switch (type_) {
    case PackedType::kF32: return reinterpret_cast<const float*>(base)[kk * kW + c];
    case PackedType::kBF16: return Bf16ToFloat(reinterpret_cast<const uint16_t*>(base)[kk * kW + Bf16Slot(c)]);
    case PackedType::kInt8: {
      float scale;
      std::memcpy(&scale, base + k_ * kW + 4 * c, 4);
      return static_cast<float>(reinterpret_cast<const int8_t*>(base)[kk * kW + c]) * scale;
    }
    case PackedType::kInt4: {
      const unsigned char* group = base + (kk / kInt4Group) * kInt4GroupBytes;
      uint16_t half;
      std::memcpy(&half, group + kInt4Group * (kW / 2) + 2 * c, 2);
      const unsigned char b = group[(kk % kInt4Group) * (kW / 2) + c % (kW / 2)];
      const int u = c >= kW / 2 ? b >> 4 : b & 0xf;
      return static_cast<float>(u - 8) * HalfToFloat(half);
    }
  }
  return 0;
}

const char* PackedTypeName(PackedType type) {
  switch (type) {
    case PackedType::kF32: return "f32";
    case PackedType::kBF16: return "bf16";
    case PackedType::kInt8: return "int8";
    case PackedType::kInt4: return "int4";
  }
  return "?";
}

}  // namespace infera::llm
