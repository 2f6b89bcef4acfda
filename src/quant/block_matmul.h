// BlockMatmul: y[M][N] = x[M][K] · Wᵀ straight from GGUF blocks (block_types.h), W stored
// as N rows of K — no dequantisation of the matrix, ever. For memory-bound decode: the M
// rows of x share ONE pass over W (a weight row is unpacked once into registers and used
// by up to 8 rows of x before the next; larger M re-reads that row from L1/L2, not memory;
// on AMX, M ≥ 16 unpacks a panel of 16 weight rows once into int8 tiles for all M rows),
// and callers split the columns into ranges to parallelise (docs/quant_kernels.md).
//
// Two steps, so that threads share the first:
//   QuantizedActivations a = QuantizeActivations(x, m, ldx, w.type(), w.k());
//   BlockMatmul(a, w, y, ldy, col_begin, col_end);   // any column range, any thread
//
// The math (the contract; "reference" below is BlockKernel::kReference, plain C++):
//
// Activations of a quantised type are quantised per activation block — 32 elements for the
// 32-element weight types, 256 for the K-quants — to int8: d = amax / 127, q = rint(x · (1/d))
// clamped to ±127 (a zero block has d = 0, q = 0). Rows are zero-padded to whole 64-element
// chunks. F32/F16/BF16 keep x in fp32.
//
// On the lanes path (below: which M takes it), every output element y[i][j] is computed by
// the same sequence of float operations, whatever M, the column range and the instruction set:
//   acc[16] = +0 (16 float lanes). Lane l of a 64-element chunk covers its elements
//   4l .. 4l+3. All integer sums below are exact (int32, no overflow for any input).
//   - 32-element types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), chunk = weight blocks 2c, 2c+1:
//       ilane = Σ over the lane's 4 elements of w_int · q, with w_int the signed code
//               (Q8_0 q, Q4_0 u − 8, Q5_0 u − 16, Q4_1/Q5_1 u);
//       acc[l] = fma(d_w(block) · d_x(block), float(ilane), acc[l]);
//       Q4_1/Q5_1, per block b in order: accm = fma(m_w(b), d_x(b) · float(Σ q over b), accm).
//     A missing second block (K ≡ 32 mod 64) has codes and scale 0 (acc[l] unchanged).
//   - K-quants, per 256-element block b (4 chunks c):
//       ilane[l] = Σ_c sc(c, l) · (Σ over the lane's 4 elements of w_int · q), w_int = u
//               for Q4_K/Q5_K, u − 32 for Q6_K; sc the lane's sub-block scale;
//       acc[l] = fma(d_w · d_x(b), float(ilane[l]), acc[l]);
//       Q4_K/Q5_K: accm = fma(dmin_w · d_x(b), float(Σ_s mn[s] · Σ q over sub-block s), accm).
//   - F32/F16/BF16: acc[k mod 16] = fma(x[k], w[k], acc[k mod 16]) for k in order.
//   y = R(acc) (+ accm for Q4_1/Q5_1, − accm for Q4_K/Q5_K), where
//   R(a) = t2[0] + t2[1], t2[i] = t4[i] + t4[i+2], t4[i] = t8[i] + t8[i+4], t8[i] = a[i] + a[i+8].
// Products d_w · d_x are float multiplies (d_w the half widened to float); fma is fused.
// So the SIMD kernels equal the reference bit for bit (block_matmul_test checks every type),
// a row's result does not depend on M (below the threshold), the other rows or the column split, and a greedy
// decode with these kernels is reproducible by the reference. Against fp32 (dequantised
// weights × unquantised x) the difference is the activation rounding: per element at most
// |w|·d_x/2; the tests bound |y − y_fp32| by Σ_k |w_k| · d_x(k) / 2 plus fp32 rounding.
//
// That is the "lanes" contract (BlockPath::kLanes), which every kernel computes for small M.
//
// The "block sums" contract (BlockPath::kBlockSums) is for batches and prefill-sized M:
// the AMX kernel's tile multiply (TDPBSSD) sums int8 products across a whole 32- (or 16-)
// element group before any float scale can be applied, so the 16 float lanes above cannot
// be kept, and the AVX-512 columns kernel (one weight row per float lane) does the same.
// Same activation quantisation (same d_x, same q); then, per output element:
//   - 32-element types, per weight block b in order (acc = +0):
//       I_b = Σ over the block's 32 elements of w_int · q (exact int32);
//       acc = fma(d_w(b) · d_x(b), float(I_b), acc);
//       Q4_1/Q5_1: accm = fma(m_w(b), d_x(b) · float(Σ q over b), accm) as above.
//   - K-quants, per super-block b in order: I_b = Σ_s sc(s) · (Σ over sub-block s of
//       w_int · q) (exact int32; s over 8 sub-blocks of 32, Q6_K 16 of 16);
//       acc = fma(d_w · d_x(b), float(I_b), acc); Q4_K/Q5_K's accm exactly as above.
//   y = acc (+ accm for Q4_1/Q5_1, − accm for Q4_K/Q5_K). F32/F16/BF16 always take the
//   lanes contract.
// The path is a pure function of (kernel, type, M): BlockPathFor. kBlockSums only for
// quantised types at M ≥ BlockSumsMinRows(kernel, type):
//   - kAmx: 16 (one tile of rows) for most types; for Q8_0, Q4_0, Q4_K and Q6_K 3
//     (ColumnsKernelMinRows), from where their batched decode steps run the same contract
//     faster in AVX-512 VNNI with one weight row per float lane
//     (block_matmul_columns_avx512.cc: a convert and an fma per 512 products instead of
//     per 64; the thresholds are where it overtakes the lanes kernel with the weights
//     streamed from memory, docs/quant_kernels.md);
//   - kAvx512Vnni (AVX-512 VNNI without AMX, e.g. AMD Zen 4): Q8_0, Q4_0, Q4_K and Q6_K
//     from ColumnsKernelMinRows (6, 3, 5, 8 rows) on that same columns kernel, prefill
//     included (it unpacks each panel of 16 weight rows once for all tiles of 16 rows);
//     the other types never (lanes at every M);
//   - kAvx2, kReference: never.
// The reference kernel computes either contract (the tests force the path), so the AMX
// and columns kernels are checked bit for bit against it; against fp32 the bound is the
// same as above (the integer sums are exact, and either float sequence is a rounding of
// the same real sum).
//
// Batch invariance: within one path a row's result depends neither on the other rows nor
// on the column split. Across the threshold it does: the same row gives (slightly)
// different bits below BlockSumsMinRows and at or above it (Q8_0, Q4_0, Q4_K, Q6_K: a
// sequence decoded in a small batch against one decoded in a larger batch; the other types
// on AMX: decode against prefill).
// Both are deterministic: the same (M, input) gives the same bits on every run and thread
// count, and on every CPU with the same BestBlockKernel (and for Q8_0, Q4_0, Q4_K and Q6_K
// on kAmx and kAvx512Vnni alike: both compute the same contract bit for bit).
//
// Kernels, chosen once at run time (BestBlockKernel): kAmx (AMX-INT8 tiles for M ≥
// kBlockSumsMinRows, kAvx512Vnni's loops below it), kAvx512Vnni (AVX-512F/BW + VNNI:
// on the lanes path vpdpbusd on 64 codes at once, Q8_0 codes biased by +128 and the bias
// removed through the activations' per-lane offsets; the columns kernel for block sums),
// kAvx2 (AVX2 + FMA + F16C: vpmaddubsw/vpmaddwd, Q8_0 by the sign trick), kReference
// (portable C++: the definitions above).
//
// Thread safety: BlockMatrix and QuantizedActivations are read-only views/values;
// BlockMatmul writes only y[i][col_begin .. col_end). The AMX and columns kernels keep their
// unpacked weight panels (and the columns kernel its staging buffers and accumulators) in
// thread_local scratch; the AMX kernel releases the tile state before returning.
#ifndef INFERA_QUANT_BLOCK_MATMUL_H_
#define INFERA_QUANT_BLOCK_MATMUL_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "quant/block_types.h"

namespace infera::quant {

enum class BlockKernel { kReference, kAvx2, kAvx512Vnni, kAmx };
const char* BlockKernelName(BlockKernel kernel);  // "reference", "avx2", "avx512vnni", "amx"
// The fastest kernel this CPU runs (detected once).
BlockKernel BestBlockKernel();
// Whether this CPU can run `kernel` (tests skip the others). kAmx also needs the kernel's
// permission for the tile state (Linux arch_prctl(ARCH_REQ_XCOMP_PERM), asked once).
bool BlockKernelSupported(BlockKernel kernel);

// Which contract (above) a product is computed by.
enum class BlockPath { kLanes, kBlockSums };
// The M from which the AMX kernel takes the block-sums path: one full tile of rows, or
// ColumnsKernelMinRows(type) where that is not 0.
constexpr int64_t kBlockSumsMinRows = 16;
// The M from which `type` runs on the AVX-512 columns kernel (the block-sums path) with
// `kernel`: kAmx 3 for Q8_0, Q4_0, Q4_K and Q6_K; kAvx512Vnni Q8_0 6, Q4_0 3, Q4_K 5, Q6_K
// 8; 0 for the other types and kernels (no columns kernel: on AMX lanes up to 16).
int64_t ColumnsKernelMinRows(BlockKernel kernel, BlockType type);
// For quantised types: kAmx ColumnsKernelMinRows(kAmx, type), or kBlockSumsMinRows where
// that is 0; kAvx512Vnni ColumnsKernelMinRows(kAvx512Vnni, type) where that is not 0. int64 max where the kernel
// never takes the block-sums path (kAvx2, kReference, a float type, kAvx512Vnni for the
// types without a columns kernel).
int64_t BlockSumsMinRows(BlockKernel kernel, BlockType type);
// kBlockSums iff m ≥ BlockSumsMinRows(kernel, type).
BlockPath BlockPathFor(BlockKernel kernel, BlockType type, int64_t m);
// Whether `kernel` computes `type` by the block-sums path at all (chosen at some M, or
// forced): kReference for every quantised type, the others where BlockSumsMinRows is
// finite.
bool ComputesBlockSums(BlockKernel kernel, BlockType type);

// A read-only view of a GGUF matrix: n rows of k elements of one type, rows contiguous.
class BlockMatrix {
 public:
  // The view, or nullopt with *error naming the problem: k not a multiple of the block
  // size, n or k not positive, `bytes` not n · RowBytes(type, k).
  static std::optional<BlockMatrix> View(const void* data, size_t bytes, BlockType type, int64_t n, int64_t k,
                                         std::string* error);
  BlockType type() const { return type_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  int64_t row_bytes() const { return row_bytes_; }
  const uint8_t* row(int64_t j) const { return data_ + j * row_bytes_; }

 private:
  const uint8_t* data_ = nullptr;
  BlockType type_ = BlockType::kF32;
  int64_t n_ = 0, k_ = 0, row_bytes_ = 0;
};

// Storage on 64-byte boundaries: the kernels load the activation records 64 bytes at a
// time, and a load that straddles two cache lines costs two (M = 8 decode: 20 % slower).
template <typename V>
struct CacheLineAllocator {
  using value_type = V;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT(google-explicit-constructor): rebinding
  V* allocate(size_t n) { return static_cast<V*>(::operator new(n * sizeof(V), std::align_val_t{64})); }
  void deallocate(V* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};

// x quantised (or kept) for one weight type and kernel; see the math above.
struct QuantizedActivations {
  // Lanes path, quantised types: one record per (64-element chunk c, row i), chunk-major — the rows
  // of a tile sit next to each other, so a kernel walks them with one pointer:
  //   int8 q[64]; int32 lane_off[16] (−bias · Σ q over the lane, the kernel's code bias;
  //   only where that bias is not 0: record_bytes 128, else 64).
  // At M = 8 the kernels are bound by how many bytes of these they pull through L1 per
  // weight chunk, so a record holds nothing else (each lane's d_x is in d32).
  int64_t record_bytes = 128;
  static constexpr int64_t kMaxRecordBytes = 128;

  BlockType type = BlockType::kF32;  // the weight type these activations are for
  BlockKernel kernel = BlockKernel::kReference;
  BlockPath path = BlockPath::kLanes;
  int64_t m = 0, k = 0;
  int64_t kp = 0;               // k zero-padded to 64 (quantised) or 16 (float) elements
  std::vector<float> x;         // float types: m × kp, row-major
  std::vector<uint8_t, CacheLineAllocator<uint8_t>> chunks;  // quantised types: kp/64 × m records
  std::vector<float> d32;       // 32-element types: m × kp/32, d_x per 32 elements (0 beyond k)
  std::vector<float> d256;      // K-quants: m × kp/256, d_x per 256 elements
  std::vector<int32_t> sum32;   // Q4_K/Q5_K: m × kp/32, Σ q per 32 elements
  std::vector<float> dsum32;    // Q4_1/Q5_1: m × kp/32, d_x · float(Σ q) per 32 elements

  // Block-sums path (kp = k): rows in tiles of 16 (the last zero-padded), each tile as an
  // AMX B operand: tile t, element quad r < k/4, row i < 16 → 4 codes at
  // q_tiles[((t · k/4 + r) · 16 + i) · 4]. Per tile, per activation block / 32 elements,
  // 16 values (one per row): d_tiles (d_x), sum_tiles (Q4_K/Q5_K: Σ q per 32),
  // dsum_tiles (Q4_1/Q5_1: d_x · float(Σ q) per 32), offset_tiles (Q8_0/Q4_0: −c · Σ q
  // per 32, c = 128 / 8; Q6_K: per 16, c = 32: the bias of the columns kernel's unsigned
  // codes u = w_int + c).
  std::vector<int8_t> q_tiles;
  std::vector<float> d_tiles;
  std::vector<int32_t> sum_tiles;
  std::vector<float> dsum_tiles;
  std::vector<int32_t> offset_tiles;

  const uint8_t* chunk(int64_t i, int64_t c) const { return chunks.data() + (c * m + i) * record_bytes; }
  const int8_t* q(int64_t i, int64_t c) const { return reinterpret_cast<const int8_t*>(chunk(i, c)); }
  const int32_t* lane_off(int64_t i, int64_t c) const { return reinterpret_cast<const int32_t*>(chunk(i, c) + 64); }
};

// Quantises (or copies) rows x[i][0..k), i < m, row stride ldx, for weights of `type` and
// the given kernel. k must pass CheckRowLength(type, k) and m ≥ 1: otherwise returns
// nullopt with *error naming the problem. The path is BlockPathFor(kernel, type, m) unless
// `path` forces one (tests: the reference computes either; the SIMD kernels only their own).
std::optional<QuantizedActivations> QuantizeActivations(const float* x, int64_t m, int64_t ldx, BlockType type,
                                                        int64_t k, std::string* error,
                                                        BlockKernel kernel = BestBlockKernel(),
                                                        std::optional<BlockPath> path = std::nullopt);

// y[i][j] = Σ_k x[i][k] · W[j][k] for i < a.m, col_begin ≤ j < col_end (other columns of y
// untouched), y row stride ldy ≥ w.n(). Returns "" or, without computing anything, the
// problem (type or k of a and w differ, column range outside [0, n]).
std::string BlockMatmul(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t col_begin,
                        int64_t col_end);

}  // namespace infera::quant

#endif  // INFERA_QUANT_BLOCK_MATMUL_H_
