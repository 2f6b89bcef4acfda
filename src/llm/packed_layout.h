// The byte layout of a PackedMatrix panel that the packer (packed_matrix.cc) writes and
// the kernels (packed_matmul.cc) read: shared so that the two cannot disagree.
#ifndef INFERA_LLM_PACKED_LAYOUT_H_
#define INFERA_LLM_PACKED_LAYOUT_H_

#include <cstdint>

#include "llm/packed_matmul.h"

namespace infera::llm::packed_layout {

// One int4 group in a panel: 32 rows × 32 bytes of nibbles, then 64 fp16 scales.
inline constexpr int64_t kInt4GroupBytes =
    PackedMatrix::kInt4Group * (PackedMatrix::kPanelWidth / 2) + PackedMatrix::kPanelWidth * 2;

// Where column c (0 ≤ c < 64) of a panel row sits in bf16 storage: each group of 32
// columns is stored as pairs (c, c + 16), so 32-bit lane i of a 512-bit load holds
// columns i (low half) and i + 16 (high half); a shift left by 16 widens the first to
// fp32, masking off the low half widens the second.
inline int64_t Bf16Slot(int64_t c) {
  const int64_t group = c / 32, i = c % 32;
  return group * 32 + (i < 16 ? 2 * i : 2 * (i - 16) + 1);
}

}  // namespace infera::llm::packed_layout

#endif  // INFERA_LLM_PACKED_LAYOUT_H_
