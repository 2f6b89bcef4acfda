// BlockProjection: y (+)= x · W (+ bias) for a GGUF projection (Projection::blocks, the
// file's quant::BlockMatrix parts), the LlamaModelRunner's matmul for GGUF models.
//
// quant::BlockMatmul walks output columns and, for each, every row of x against that
// column's weight row: one pass over the weights for the whole batch, right for decode
// (a few rows) but, for a prefill chunk of hundreds of rows, every column re-reads all of
// the quantised activations (512 rows × 2048 inputs = 3 MB, 12 MB for the 8192-input down
// projection): more than L2 holds, so each column streamed them from L3 and a 512-token
// prefill of the 1 B model spent 94 % of its time there (docs/llm.md, "GGUF models: the
// step around the kernels"). So the step is tiled outside the kernel:
//   - the rows are quantised in row blocks (about 256 KiB of activations each) — a row's
//     quantisation and its results do not depend on the other rows (block_matmul.h), so
//     the bits are those of one call over all rows;
//   - the output columns are cut into pieces (about 8 per intra-op thread) that the
//     threads claim from a shared counter, so a thread the OS deschedules on a busy
//     machine delays one piece, not a fixed half of the step; a piece is walked in column
//     blocks (about 256 KiB of weights), and per column block BlockMatmul is called once
//     per row block: the weights come from memory once, and the activations and weights
//     of a call stay in L2.
// Where the kernel takes the block-sums path for these rows (M ≥ BlockSumsMinRows: on AMX
// 16 or the columns kernel's 3 rows, on AVX-512 VNNI the columns kernel's 3 rows for its
// four types: block_matmul.h)
// the rows are one block: that kernel already unpacks each panel of weight rows once for
// all rows, and row blocks would only repeat the unpacking.
// Decode (rows within one row block): one BlockMatmul per part and piece. Activations are
// quantised once per block type (q, k, v of one type share them).
//
// Threads: the runner's WorkerTeam (worker_team.h): quantisation by row blocks, then the
// pieces; no locks (an atomic piece counter, per-thread error slots). Not thread-safe
// per workspace or team.
#ifndef INFERA_LLM_BLOCK_PROJECTION_H_
#define INFERA_LLM_BLOCK_PROJECTION_H_

#include <cstdint>
#include <vector>

#include "llm/llama_weights.h"
#include "llm/worker_team.h"

namespace infera::llm {

// Buffers a runner keeps between calls, so a step does not allocate (and page-fault in)
// them per projection: the accumulate path's [rows, out] result before the residual add.
struct BlockProjectionWorkspace {
  std::vector<float> scratch;
};

// Rows of x per quantised row block for inputs of `in` features (a multiple of 8, ≥ 8).
int64_t BlockProjectionRowBlock(int64_t in);

// y[r][0..w.out) = (accumulate ? y : 0) + x[r] · W + bias for r < rows; x rows contiguous
// (stride w.in), y row stride ldy, on `team`'s threads. Throws std::runtime_error when the
// kernel refuses (types and sizes were checked at load, so it does not).
void BlockProjection(const float* x, int64_t rows, const Projection& w, const float* bias, float* y, int64_t ldy,
                     bool accumulate, BlockProjectionWorkspace* workspace, WorkerTeam& team);

}  // namespace infera::llm

#endif  // INFERA_LLM_BLOCK_PROJECTION_H_
