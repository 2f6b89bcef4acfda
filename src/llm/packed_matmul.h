// PackedMatrix and PackedMatmul: y = x · W for a projection's weight, packed ONCE at load
// into column panels so that one call streams every weight byte once from memory, for
// all rows of x together.
//
// Why: a decode step multiplies a few rows (one per running sequence) by every weight
// matrix of the model. A BLAS GEMM packs the weight matrix on every call (reading and
// writing it before computing), so with M ≤ 16 rows a step moved each weight byte about
// three times; a GEMV (M = 1) streams it once but only serves one row. With the weights
// pre-packed, the rows of x share one pass over them: the step costs one weight stream
// plus M·K·N FMAs (see docs/llm.md, "Small-batch matmul").
//
// Memory layout (kPanelWidth = 64 columns per panel; K = in, N = out):
//
//   W [K][N] (logical)          packed: panel p = columns [64p, 64p + 64)
//   ┌────┬────┬─ ─┬────┐        ┌──────────────────────────┐ panel 0: K rows of 64
//   │ p0 │ p1 │...│ pP │        │ k=0: W[0][0..64)          │   (one row = 256 B fp32,
//   │    │    │   │    │   →    │ k=1: W[1][0..64)          │    128 B bf16), contiguous
//   │    │    │   │    │        │ ...                       │
//   └────┴────┴─ ─┴────┘        ├──────────────────────────┤ panel 1 ...
//                               └──────────────────────────┘
//   The last panel is zero-padded to 64 columns. bf16 panels interleave each group of
//   32 columns as (c, c+16) pairs, so one 512-bit load widens to two fp32 vectors with
//   one shift and one mask (the AVX-512 kernel; the portable one indexes the same way).
//
//   Quantised panels (weight-only, symmetric; docs/llm.md, "Weight quantisation"):
//   kInt8  [K rows][64 int8], then [64 fp32 scales] (one per output column:
//          W[k][c] = scale[c] · q[k][c], scale = absmax / 127)
//   kInt4  per group g of kInt4Group (32) rows: [32 rows][32 bytes], then [64 fp16
//          scales]; byte i of a row holds column i (low nibble) and column i + 32 (high
//          nibble) as u = q + 8, q in [-8, 7]; W[k][c] = d[g][c] · q. The last group is
//          zero-padded to 32 rows. d follows llama.cpp's Q4_0: the value of largest
//          magnitude in the group / -8.
//   Scales sit right after the weights they scale, so a call streams both once, in order.
//
// Kernel: for a block of rows and one panel, a tile of R rows × 64 columns is kept in
// registers (R ≤ 6: 24 zmm accumulators) while k runs over the whole panel; the panel is
// read from memory by the first tile and from L2 by the others. Every output element is
// the sum over k in increasing order (one FMA chain), whatever M and the tiling are, so
// a row's result does not depend on the other rows in the batch (batched == unbatched,
// bit for bit).
//
// Dispatch: AVX-512F intrinsics when the CPU has them, else a portable C++ kernel
// compiled twice — for AVX2 + FMA (AMD EPYC, Intel since Haswell) and for baseline
// x86-64 — chosen once at run time. The
// quantised types are dequantised to fp32 (int4: (u − 8)·d, exact) and then multiplied
// in fp32 like the others — in registers, shared by a tile's rows, on AVX-512; in the
// portable kernel straight into the FMA for M ≤ 2, else through a 32-row buffer that
// every row reads. int8 applies its per-column scale once, after the k loop. Both
// portable paths compute the same bits for a row.
//
// Thread-safe: PackedMatrix is read-only after construction; PackedMatmul writes only
// the columns of the panels it is given, so callers parallelise over panel ranges.
//
// Usage:
//   PackedMatrix w = PackedMatrix::FromOutIn(hf_weight, /*n=*/out, /*k=*/in, WeightType::kF32);
//   PackedMatmul(x, m, /*ldx=*/in, w, bias_or_null, y, /*ldy=*/out, /*accumulate=*/false,
//                0, w.num_panels());
#ifndef INFERA_LLM_PACKED_MATMUL_H_
#define INFERA_LLM_PACKED_MATMUL_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace infera::llm {

// kF32/kBF16 keep the weights (bf16 rounded to nearest even); kInt8/kInt4 quantise them
// (see the layout above).
enum class PackedType { kF32, kBF16, kInt8, kInt4 };

// "f32", "bf16", "int8", "int4".
const char* PackedTypeName(PackedType type);

class PackedMatrix {
 public:
  static constexpr int64_t kPanelWidth = 64;
  static constexpr int64_t kInt4Group = 32;  // K rows per int4 scale

  PackedMatrix() = default;
  // From W stored [n][k] row-major: Hugging Face's Linear layout (out, in). kBF16 rounds
  // to nearest even, so weights that came from a bf16 checkpoint are kept exactly.
  static PackedMatrix FromOutIn(const float* w, int64_t n, int64_t k, PackedType type);

  bool empty() const { return data_ == nullptr; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  PackedType type() const { return type_; }
  int64_t num_panels() const { return (n_ + kPanelWidth - 1) / kPanelWidth; }
  size_t bytes() const { return bytes_; }
  // Panel p: K × kPanelWidth elements (float, uint16_t bf16 bits, or the quantised
  // layout above, scales included). Panels are 64-byte aligned.
  const void* panel(int64_t p) const { return data_.get() + static_cast<size_t>(p) * panel_bytes_; }
  size_t panel_bytes() const { return panel_bytes_; }

  // W[kk][nn] as float: for the quantised types the dequantised value the kernels use
  // (scale · q). Tests and debugging; slow.
  float At(int64_t kk, int64_t nn) const;

 private:
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  template <typename Get>
  static PackedMatrix Pack(int64_t n, int64_t k, PackedType type, Get get);

  std::unique_ptr<unsigned char[], Free> data_;
  int64_t k_ = 0;
  int64_t n_ = 0;
  PackedType type_ = PackedType::kF32;
  size_t panel_bytes_ = 0;
  size_t bytes_ = 0;
};

// y[i][j] = (accumulate ? y[i][j] : 0) + Σ_k x[i][k]·W[k][j] (+ bias[j]) for rows i < m and
// the columns of panels [panel_begin, panel_end). x rows have stride ldx (≥ w.k()), y rows
// ldy (≥ w.n()); `bias` may be null. Columns of other panels are not touched.
void PackedMatmul(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias,
                  float* y, int64_t ldy, bool accumulate, int64_t panel_begin, int64_t panel_end);

// Which kernel PackedMatmul runs on this CPU: "avx512f", "avx2+fma" or "portable".
const char* PackedMatmulIsa();

// The three kernels behind PackedMatmul, for tests and benchmarks (Avx512 and Avx2 need
// their CPU features: check CpuHasAvx512f / CpuHasAvx2Fma, common/cpu_features.h,
// first). Avx2 and Portable are the same C++ body built for AVX2 + FMA and for baseline
// x86-64.
namespace packed_matmul_internal {
void Avx2(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
          int64_t ldy, bool accumulate, int64_t panel_begin, int64_t panel_end);
void Avx512(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
            int64_t ldy, bool accumulate, int64_t panel_begin, int64_t panel_end);
void Portable(const float* x, int64_t m, int64_t ldx, const PackedMatrix& w, const float* bias, float* y,
              int64_t ldy, bool accumulate, int64_t panel_begin, int64_t panel_end);
}  // namespace packed_matmul_internal

}  // namespace infera::llm

#endif  // INFERA_LLM_PACKED_MATMUL_H_
