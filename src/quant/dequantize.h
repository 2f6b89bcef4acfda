// Scalar reference dequantisation of GGUF block rows (layouts in block_types.h): the
// value of every weight as the kernels and tests take it. Float operations in a fixed
// order, no fused multiply-add (the library builds with -ffp-contract=off), so that
// scripts/gguf_quant.py computes the same bits with numpy float32:
//   Q8_0  d·q                 Q4_0  d·(u − 8)        Q5_0  d·(u − 16)
//   Q4_1  d·u + m             Q5_1  d·u + m
//   Q4_K / Q5_K  (d·sc)·u − (dmin·mn)       Q6_K  (d·sc)·(u − 32)
// with d, m, dmin the halves widened to float and integers converted to float.
#ifndef INFERA_QUANT_DEQUANTIZE_H_
#define INFERA_QUANT_DEQUANTIZE_H_

#include <cstdint>

#include "quant/block_types.h"

namespace infera::quant {

// out[0..k) = the k weights of the row at `row` (RowBytes(type, k) bytes). k must pass
// CheckRowLength.
void DequantizeRow(BlockType type, const void* row, int64_t k, float* out);

// The 6-bit scale and min of sub-block s (0..7) from a Q4_K/Q5_K block's 12 scale bytes.
void UnpackKScaleMin(const uint8_t* scales12, int s, uint8_t* scale, uint8_t* min);

}  // namespace infera::quant

#endif  // INFERA_QUANT_DEQUANTIZE_H_
