// Internal to block_matmul: the kernels behind BlockMatmul (same contract, same
// bits; see block_matmul.h) and what they share. Each computes columns [c0, c1) of all
// a.m rows; arguments are already checked.
#ifndef INFERA_QUANT_BLOCK_MATMUL_KERNELS_H_
#define INFERA_QUANT_BLOCK_MATMUL_KERNELS_H_

#include <cstdint>

#include "quant/block_matmul.h"

namespace infera::quant::block_matmul_internal {

// The bias b of the activations' lane offsets (lane_off = −b · Σ q): the kernel adds
// lane_off to its Σ u · q over unsigned codes u = w_int + b.
int CodeBias(BlockType type, BlockKernel kernel);
// Rows of x that share one unpacked weight chunk (registers: 2 per row for the K-quants).
constexpr int kTileRows = 8;

void ReferenceColumns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0,
                      int64_t c1);
void Avx2Columns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1);
void Avx512VnniColumns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0,
                       int64_t c1);
// The block-sums path (a.path == kBlockSums) on AMX tiles.
void AmxColumns(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0, int64_t c1);
// The block-sums path in AVX-512 VNNI for Q8_0, Q4_0, Q4_K and Q6_K (one weight row per
// float lane; block_matmul_columns_avx512.cc): any a.m ≥ 1 (the AMX kernel calls it below 16).
void ColumnsAvx512(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t c0,
                   int64_t c1);

// One activation row quantised (block_matmul.h): q[e] for e < k, d[b] per act_block
// elements. The portable loop and an AVX-512 one with the same bits (same max, the same
// float multiply by 1/d, round-to-nearest-even, clamp).
void QuantizeRowPortable(const float* x, int64_t k, int64_t act_block, int8_t* q, float* d);
void QuantizeRowAvx512(const float* x, int64_t k, int64_t act_block, int8_t* q, float* d);

}  // namespace infera::quant::block_matmul_internal

#endif  // INFERA_QUANT_BLOCK_MATMUL_KERNELS_H_
