#include "llm/block_projection.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/str_cat.h"
#include "quant/block_matmul.h"

namespace infera::llm {
namespace {

// Bytes of quantised activations per row block and of weights per column block: together
// about half of a 1 MiB L2 (2 MiB on the Xeon the figures in docs/benchmarks.md come
// from), leaving room for the output rows and the prefetched weight stream.
// (Measured, 1 B Q4_0, a 512-token prefill on one thread, activation/weight KiB: 256/256,
// 64/128 and 64/64 took 15.9-16.4 CPU-s, 128/64 17.4, 32/32 17.6; untiled 57.6.)
constexpr int64_t kActivationBlockBytes = 256 << 10;
constexpr int64_t kWeightBlockBytes = 256 << 10;

constexpr int64_t kPiecesPerThread = 8;

int64_t ColumnBlock(const Projection& w) {
  int64_t row_bytes = 1;
  for (const BlockPart& part : w.blocks) row_bytes = std::max(row_bytes, part.matrix.row_bytes());
  return std::max<int64_t>(16, kWeightBlockBytes / row_bytes / 16 * 16);
}

}  // namespace

int64_t BlockProjectionRowBlock(int64_t in) {
  // One record of at most QuantizedActivations::kMaxRecordBytes per 64 inputs and row.
  const int64_t row_bytes = (in + 63) / 64 * quant::QuantizedActivations::kMaxRecordBytes;
  return std::max<int64_t>(8, kActivationBlockBytes / row_bytes / 8 * 8);
}

void BlockProjection(const float* x, int64_t rows, const Projection& w, const float* bias, float* y, int64_t ldy,
                     bool accumulate, BlockProjectionWorkspace* workspace, WorkerTeam& team) {
  // The distinct block types of the parts, and each part's index among them.
  std::vector<quant::BlockType> types;
  std::vector<size_t> type_of_part;
  for (const BlockPart& part : w.blocks) {
    const auto it = std::find(types.begin(), types.end(), part.matrix.type());
    type_of_part.push_back(static_cast<size_t>(it - types.begin()));
    if (it == types.end()) types.push_back(part.matrix.type());
  }
  // The block-sums path (AMX, or the AVX-512 columns kernel) unpacks a panel of weight
  // rows once and runs every row of x against it inside the kernel, so it takes all rows
  // in one call: row blocks would unpack each panel once per block and push the down
  // projection's blocks (8 rows at 8192 inputs) below BlockSumsMinRows onto the lanes
  // path (a 512-token prefill of the 1 B Q4_0 model on AMX, one thread: 4.9 s in one
  // call, 5.2-5.4 s in 64-row blocks, 8.8-9.0 s in the 256 KiB blocks the lanes path wants).
  const bool block_sums = std::all_of(types.begin(), types.end(), [&](quant::BlockType type) {
    return quant::BlockPathFor(quant::BestBlockKernel(), type, rows) == quant::BlockPath::kBlockSums;
  });
  const int64_t row_block = block_sums ? rows : BlockProjectionRowBlock(w.in);
  const int64_t row_blocks = (rows + row_block - 1) / row_block;
  // acts[type · row_blocks + row block]; quantised in parallel (rows are independent).
  const int64_t jobs = static_cast<int64_t>(types.size()) * row_blocks;
  std::vector<std::optional<quant::QuantizedActivations>> acts(static_cast<size_t>(jobs));
  std::vector<std::string> errors(static_cast<size_t>(jobs));
  team.ParallelFor(0, jobs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t job = begin; job < end; ++job) {
      const int64_t r0 = job % row_blocks * row_block;
      acts[job] = quant::QuantizeActivations(x + r0 * w.in, std::min(row_block, rows - r0), w.in,
                                             types[job / row_blocks], w.in, &errors[job]);
    }
  });
  for (int64_t job = 0; job < jobs; ++job) {
    if (!acts[job]) throw std::runtime_error(StrCat("quantising activations: ", errors[job]));
  }
  float* out = y;
  int64_t ldo = ldy;
  if (accumulate) {
    workspace->scratch.resize(static_cast<size_t>(rows * w.out));
    out = workspace->scratch.data();
    ldo = w.out;
  }
  // The columns in pieces, about 8 per thread, that the threads claim in turn: on a busy
  // machine a thread that the kernel deschedules holds up only the piece it has, while
  // a static split (a half each at 2 threads) made the whole step wait for its half.
  const int64_t threads = team.threads();
  const int64_t piece = std::max<int64_t>(16, (w.out / (threads * kPiecesPerThread) + 15) / 16 * 16);
  const int64_t pieces = (w.out + piece - 1) / piece;
  const int64_t column_block = row_blocks > 1 ? ColumnBlock(w) : piece;
  std::atomic<int64_t> next_piece{0};
  // Types and sizes were checked at load, so BlockMatmul cannot refuse; should it, each
  // thread keeps its first message in its own slot and the step fails.
  std::vector<std::string> failures(static_cast<size_t>(threads));
  team.ParallelFor(0, threads, 1, [&](int64_t thread, int64_t) {
    std::string& failure = failures[static_cast<size_t>(thread)];
    for (int64_t p = next_piece.fetch_add(1); p < pieces; p = next_piece.fetch_add(1)) {
      const int64_t end = std::min(w.out, (p + 1) * piece);
      for (int64_t c0 = p * piece; c0 < end; c0 += column_block) {
        const int64_t c1 = std::min(end, c0 + column_block);
        for (int64_t rb = 0; rb < row_blocks; ++rb) {
          float* out_rows = out + rb * row_block * ldo;
          for (size_t i = 0; i < w.blocks.size(); ++i) {
            const BlockPart& part = w.blocks[i];
            const int64_t b = std::max(c0, part.out_offset) - part.out_offset;
            const int64_t e = std::min(c1, part.out_offset + part.matrix.n()) - part.out_offset;
            if (b >= e) continue;
            const quant::QuantizedActivations& a = *acts[type_of_part[i] * row_blocks + rb];
            std::string error = quant::BlockMatmul(a, part.matrix, out_rows + part.out_offset, ldo, b, e);
            if (!error.empty() && failure.empty()) failure = std::move(error);
          }
        }
      }
    }
  });
  for (const std::string& failure : failures) {
    if (!failure.empty()) throw std::runtime_error(StrCat("block matmul: ", failure));
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* dst = y + r * ldy;
    const float* src = out + r * ldo;
    if (accumulate) {
      for (int64_t j = 0; j < w.out; ++j) dst[j] += src[j];
    }
    if (bias) {
      for (int64_t j = 0; j < w.out; ++j) dst[j] += bias[j];
    }
  }
}

}  // namespace infera::llm
