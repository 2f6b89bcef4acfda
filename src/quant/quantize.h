// Reference quantisers: fp32 row → GGUF blocks of any type in block_types.h, round to
// nearest (ties to even) with the scales chosen per block as below. They exist for tests
// and for writing test GGUF files; they are not llama.cpp's quantisers (whose K-quant
// scale search gives smaller errors), only formats-compatible. scripts/gguf_quant.py
// encodes the same bytes with numpy (checked by tests/integration/test_gguf_quant.py).
//
// Per block (halves rounded to nearest even; a zero step quantises every element to the
// block's zero point):
//   Q8_0  d = half(amax / 127), q = clamp(rint(x / d), −127, 127)
//   Q4_0  d = half(v / −8), v the element of largest magnitude (first one), u = clamp(rint(x / d) + 8, 0, 15)
//   Q5_0  as Q4_0 with 16 and 31
//   Q4_1  d = half((max − min) / 15), m = half(min), u = clamp(rint((x − m) / d), 0, 15); Q5_1 with 31
//   Q4_K  per sub-block s of 32: lo = min(0, min x), scale_s = (max x − lo) / 15, minv_s = −lo;
//         d = half(max scale_s / 63), dmin = half(max minv_s / 63), sc = clamp(rint(scale_s / d), 0, 63),
//         mn = clamp(rint(minv_s / dmin), 0, 63), u = clamp(rint((x + dmin·mn) / (d·sc)), 0, 15); Q5_K with 31
//   Q6_K  per sub-block s of 16: scale_s = v / −32 (v as Q4_0); d = half(max |scale_s| / 127),
//         sc = clamp(rint(scale_s / d), −127, 127), u = clamp(rint(x / (d·sc)), −32, 31) + 32
//   F16 / BF16: round to nearest even; F32: copied.
#ifndef INFERA_QUANT_QUANTIZE_H_
#define INFERA_QUANT_QUANTIZE_H_

#include <cstdint>

#include "quant/block_types.h"

namespace infera::quant {

// Writes RowBytes(type, k) bytes to `out`. k must pass CheckRowLength.
void QuantizeRow(BlockType type, const float* x, int64_t k, void* out);

}  // namespace infera::quant

#endif  // INFERA_QUANT_QUANTIZE_H_
