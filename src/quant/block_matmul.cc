#include "quant/block_matmul.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/cpu_features.h"
#include "quant/block_matmul_kernels.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace infera::quant {

using block_matmul_internal::CodeBias;

const char* BlockKernelName(BlockKernel kernel) {
  switch (kernel) {
    case BlockKernel::kReference:
      return "reference";
    case BlockKernel::kAvx2:
      return "avx2";
    case BlockKernel::kAvx512Vnni:
      return "avx512vnni";
    case BlockKernel::kAmx:
      return "amx";
  }
  return "?";
}

namespace {

// AMX-TILE and AMX-INT8 (CPUID leaf 7, EDX bits 24 and 25), and the kernel's permission to
// use the tile state: Linux hands out XTILEDATA only on request, per process.
bool AmxUsable() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  if (((d >> 24) & 1) == 0 || ((d >> 25) & 1) == 0) return false;
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

}  // namespace

bool BlockKernelSupported(BlockKernel kernel) {
  switch (kernel) {
    case BlockKernel::kReference:
      return true;
    case BlockKernel::kAvx2: {
      static const bool has = CpuHasAvx2Fma() && CpuHasF16c();
      return has;
    }
    case BlockKernel::kAvx512Vnni: {
      static const bool has = CpuHasAvx512f() && __builtin_cpu_supports("avx512bw") &&
                              __builtin_cpu_supports("avx512vnni") && BlockKernelSupported(BlockKernel::kAvx2);
      return has;
    }
    case BlockKernel::kAmx: {
      static const bool has = BlockKernelSupported(BlockKernel::kAvx512Vnni) && AmxUsable();
      return has;
    }
  }
  return false;
}

int64_t ColumnsKernelMinRows(BlockKernel kernel, BlockType type) {
  const bool has_columns = type == BlockType::kQ8_0 || type == BlockType::kQ4_0 || type == BlockType::kQ4_K ||
                           type == BlockType::kQ6_K;
  if (!has_columns) return 0;
  // Where the columns kernel overtakes the lanes kernel, the weights streamed from memory
  // at 2 threads (block_matmul_bench, 8192×2048; docs/quant_kernels.md). On the Xeon with
  // AMX the lanes kernel is slower from 3 rows for all four types. On AMD Zen 4 (AVX-512
  // VNNI, no AMX) its lanes kernel keeps up longer: Q8_0 is even at 5 rows and 1.2× slower
  // at 6, Q4_K even at 4 and 1.2× slower at 5, Q6_K even at 8 and 1.1-1.4× slower from 9;
  // Q4_0's columns kernel is faster from 3.
  switch (kernel) {
    case BlockKernel::kAmx:
      return 3;
    case BlockKernel::kAvx512Vnni:
      return type == BlockType::kQ8_0 ? 6 : type == BlockType::kQ4_0 ? 3 : type == BlockType::kQ4_K ? 5 : 8;
    default:
      return 0;
  }
}

int64_t BlockSumsMinRows(BlockKernel kernel, BlockType type) {
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  if (!IsQuantized(type)) return kNever;
  const int64_t columns = ColumnsKernelMinRows(kernel, type);
  switch (kernel) {
    case BlockKernel::kAmx:
      return columns > 0 ? columns : kBlockSumsMinRows;
    case BlockKernel::kAvx512Vnni:
      return columns > 0 ? columns : kNever;
    default:
      return kNever;
  }
}

bool ComputesBlockSums(BlockKernel kernel, BlockType type) {
  if (kernel == BlockKernel::kReference) return IsQuantized(type);
  return BlockSumsMinRows(kernel, type) != std::numeric_limits<int64_t>::max();
}

BlockPath BlockPathFor(BlockKernel kernel, BlockType type, int64_t m) {
  return m >= BlockSumsMinRows(kernel, type) ? BlockPath::kBlockSums : BlockPath::kLanes;
}

BlockKernel BestBlockKernel() {
  static const BlockKernel best = BlockKernelSupported(BlockKernel::kAmx)          ? BlockKernel::kAmx
                                  : BlockKernelSupported(BlockKernel::kAvx512Vnni) ? BlockKernel::kAvx512Vnni
                                  : BlockKernelSupported(BlockKernel::kAvx2)     ? BlockKernel::kAvx2
                                                                                 : BlockKernel::kReference;
  return best;
}

std::optional<BlockMatrix> BlockMatrix::View(const void* data, size_t bytes, BlockType type, int64_t n, int64_t k,
                                             std::string* error) {
  std::string problem = CheckRowLength(type, k);
  if (problem.empty() && n <= 0) problem = "matrix must have at least one row, got " + std::to_string(n);
  if (problem.empty() && static_cast<uint64_t>(RowBytes(type, k)) * static_cast<uint64_t>(n) != bytes) {
    problem = std::string(Name(type)) + " matrix of " + std::to_string(n) + " x " + std::to_string(k) + " needs " +
              std::to_string(RowBytes(type, k) * n) + " bytes, got " + std::to_string(bytes);
  }
  if (problem.empty() && data == nullptr) problem = "matrix data is null";
  if (!problem.empty()) {
    *error = problem;
    return std::nullopt;
  }
  BlockMatrix w;
  w.data_ = static_cast<const uint8_t*>(data);
  w.type_ = type;
  w.n_ = n;
  w.k_ = k;
  w.row_bytes_ = RowBytes(type, k);
  return w;
}

namespace block_matmul_internal {

int CodeBias(BlockType type, BlockKernel kernel) {
  switch (type) {
    case BlockType::kQ4_0:
      return 8;
    case BlockType::kQ5_0:
      return 16;
    case BlockType::kQ6_K:
      return 32;
    case BlockType::kQ8_0:
      return kernel == BlockKernel::kAvx512Vnni || kernel == BlockKernel::kAmx ? 128 : 0;
    default:
      return 0;
  }
}

void QuantizeRowPortable(const float* x, int64_t k, int64_t act_block, int8_t* q, float* d) {
  for (int64_t b = 0; b < k / act_block; ++b) {
    float amax = 0.0f;
    for (int64_t e = b * act_block; e < (b + 1) * act_block; ++e) amax = std::max(amax, std::fabs(x[e]));
    const float db = amax / 127.0f;
    const float id = db == 0.0f ? 0.0f : 1.0f / db;
    for (int64_t e = b * act_block; e < (b + 1) * act_block; ++e) {
      const float r = std::nearbyint(x[e] * id);  // NaN (0 · ∞ when d is tiny) → 0
      q[e] = static_cast<int8_t>(r != r ? 0 : r > 127.0f ? 127 : (r < -127.0f ? -127 : static_cast<int>(r)));
    }
    d[b] = db;
  }
}

}  // namespace block_matmul_internal

namespace {

// The block-sums layout of block_matmul.h (QuantizedActivations::q_tiles ...), from rows
// quantised one at a time.
void FillBlockSums(const float* x, int64_t ldx, bool avx512, QuantizedActivations* a) {
  const BlockType type = a->type;
  const int64_t m = a->m, k = a->k;
  const bool k_quant = Info(type).block_elements == 256;
  const bool with_min = type == BlockType::kQ4_1 || type == BlockType::kQ5_1;
  const bool with_sub_sums = type == BlockType::kQ4_K || type == BlockType::kQ5_K;
  const int64_t act_block = k_quant ? 256 : 32;
  const int64_t tiles = (m + 15) / 16, blocks = k / act_block, quads = k / 4;
  a->kp = k;
  a->q_tiles.assign(static_cast<size_t>(tiles * 16 * k), 0);
  a->d_tiles.assign(static_cast<size_t>(tiles * blocks * 16), 0.0f);
  if (with_sub_sums) a->sum_tiles.assign(static_cast<size_t>(tiles * (k / 32) * 16), 0);
  if (with_min) a->dsum_tiles.assign(static_cast<size_t>(tiles * (k / 32) * 16), 0.0f);
  // The columns kernel's unsigned-code bias c (u = w_int + c); 0: no offsets.
  // Q6_K's per sub-block of 16 elements, the others' per 32.
  const int offset_bias = type == BlockType::kQ8_0   ? 128
                          : type == BlockType::kQ4_0 ? 8
                          : type == BlockType::kQ6_K ? 32
                                                     : 0;
  const int64_t offset_group = type == BlockType::kQ6_K ? 16 : 32;
  if (offset_bias != 0) a->offset_tiles.assign(static_cast<size_t>(tiles * (k / offset_group) * 16), 0);
  std::vector<int8_t> q(static_cast<size_t>(k));
  std::vector<float> block_d(static_cast<size_t>(blocks));
  for (int64_t i = 0; i < m; ++i) {
    const int64_t t = i / 16, row = i % 16;
    if (avx512) {
      block_matmul_internal::QuantizeRowAvx512(x + i * ldx, k, act_block, q.data(), block_d.data());
    } else {
      block_matmul_internal::QuantizeRowPortable(x + i * ldx, k, act_block, q.data(), block_d.data());
    }
    int8_t* dst = a->q_tiles.data() + (t * quads * 16 + row) * 4;
    for (int64_t r = 0; r < quads; ++r) std::memcpy(dst + r * 64, q.data() + 4 * r, 4);
    for (int64_t b = 0; b < blocks; ++b) a->d_tiles[(t * blocks + b) * 16 + row] = block_d[b];
    if (with_min || with_sub_sums) {
      for (int64_t s = 0; s < k / 32; ++s) {
        int32_t sum = 0;
        for (int e = 0; e < 32; ++e) sum += q[32 * s + e];
        const size_t at = static_cast<size_t>((t * (k / 32) + s) * 16 + row);
        if (with_sub_sums) a->sum_tiles[at] = sum;
        if (with_min) a->dsum_tiles[at] = block_d[s] * static_cast<float>(sum);
      }
    }
    for (int64_t s = 0; offset_bias != 0 && s < k / offset_group; ++s) {
      int32_t sum = 0;
      for (int e = 0; e < offset_group; ++e) sum += q[offset_group * s + e];
      a->offset_tiles[static_cast<size_t>((t * (k / offset_group) + s) * 16 + row)] = -offset_bias * sum;
    }
  }
}

}  // namespace

std::optional<QuantizedActivations> QuantizeActivations(const float* x, int64_t m, int64_t ldx, BlockType type,
                                                        int64_t k, std::string* error, BlockKernel kernel,
                                                        std::optional<BlockPath> forced_path) {
  std::string problem = CheckRowLength(type, k);
  if (problem.empty() && m <= 0) problem = "activations must have at least one row, got " + std::to_string(m);
  if (problem.empty() && ldx < k) problem = "activation row stride " + std::to_string(ldx) + " < k " + std::to_string(k);
  if (problem.empty() && !BlockKernelSupported(kernel)) {
    problem = std::string("kernel ") + BlockKernelName(kernel) + " is not supported by this CPU";
  }
  const BlockPath path = forced_path.value_or(BlockPathFor(kernel, type, m));
  if (problem.empty() && path == BlockPath::kBlockSums && !ComputesBlockSums(kernel, type)) {
    problem = std::string("the block-sums path needs a quantised type and the amx or reference kernel (avx512vnni: "
                          "Q8_0, Q4_0, Q4_K, Q6_K), got ") +
              Name(type) + " and " + BlockKernelName(kernel);
  }
  if (!problem.empty()) {
    *error = problem;
    return std::nullopt;
  }
  QuantizedActivations a;
  a.type = type;
  a.kernel = kernel;
  a.path = path;
  a.m = m;
  a.k = k;
  const bool avx512 = kernel == BlockKernel::kAvx512Vnni || kernel == BlockKernel::kAmx;
  if (path == BlockPath::kBlockSums) {
    FillBlockSums(x, ldx, avx512, &a);
    return a;
  }
  if (!IsQuantized(type)) {
    a.kp = (k + 15) / 16 * 16;
    a.x.assign(static_cast<size_t>(m * a.kp), 0.0f);
    for (int64_t i = 0; i < m; ++i) std::copy(x + i * ldx, x + i * ldx + k, a.x.begin() + i * a.kp);
    return a;
  }
  const bool k_quant = Info(type).block_elements == 256;
  const bool with_min = type == BlockType::kQ4_1 || type == BlockType::kQ5_1;
  const bool with_sub_sums = type == BlockType::kQ4_K || type == BlockType::kQ5_K;
  const int64_t act_block = k_quant ? 256 : 32;
  const int bias = CodeBias(type, kernel);
  a.kp = (k + 63) / 64 * 64;
  const int64_t chunks = a.kp / 64;
  a.record_bytes = bias != 0 ? 128 : 64;
  a.chunks.assign(static_cast<size_t>(chunks * m * a.record_bytes), 0);
  if (k_quant) a.d256.assign(static_cast<size_t>(m * a.kp / 256), 0.0f);
  if (!k_quant) a.d32.assign(static_cast<size_t>(m * a.kp / 32), 0.0f);
  if (with_sub_sums) a.sum32.assign(static_cast<size_t>(m * a.kp / 32), 0);
  if (with_min) a.dsum32.assign(static_cast<size_t>(m * a.kp / 32), 0.0f);
  std::vector<int8_t> q(static_cast<size_t>(a.kp));
  std::vector<float> block_d(static_cast<size_t>(a.kp / act_block), 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    const float* xr = x + i * ldx;
    std::fill(q.begin(), q.end(), 0);
    if (avx512) {
      block_matmul_internal::QuantizeRowAvx512(xr, k, act_block, q.data(), block_d.data());
    } else {
      block_matmul_internal::QuantizeRowPortable(xr, k, act_block, q.data(), block_d.data());
    }
    for (int64_t b = 0; b < k / act_block; ++b) (k_quant ? a.d256[i * a.kp / 256 + b] : a.d32[i * a.kp / 32 + b]) = block_d[b];
    for (int64_t c = 0; c < chunks; ++c) {
      uint8_t* record = a.chunks.data() + (c * m + i) * a.record_bytes;
      std::memcpy(record, q.data() + 64 * c, 64);
      for (int l = 0; l < 16 && bias != 0; ++l) {
        const int8_t* lane = q.data() + 64 * c + 4 * l;
        const int32_t off = -bias * (lane[0] + lane[1] + lane[2] + lane[3]);
        std::memcpy(record + 64 + 4 * l, &off, 4);
      }
    }
    for (int64_t s = 0; s < k / 32; ++s) {
      int32_t sum = 0;
      for (int e = 0; e < 32; ++e) sum += q[32 * s + e];
      if (with_sub_sums) a.sum32[i * a.kp / 32 + s] = sum;
      if (with_min) a.dsum32[i * a.kp / 32 + s] = block_d[s] * static_cast<float>(sum);
    }
  }
  return a;
}

std::string BlockMatmul(const QuantizedActivations& a, const BlockMatrix& w, float* y, int64_t ldy, int64_t col_begin,
                        int64_t col_end) {
  if (a.type != w.type()) {
    return std::string("activations were quantised for ") + Name(a.type) + ", the matrix is " + Name(w.type());
  }
  if (a.k != w.k()) return "activations have k " + std::to_string(a.k) + ", the matrix " + std::to_string(w.k());
  if (col_begin < 0 || col_end > w.n() || col_begin > col_end) {
    return "column range [" + std::to_string(col_begin) + ", " + std::to_string(col_end) + ") outside [0, " +
           std::to_string(w.n()) + ")";
  }
  if (ldy < w.n()) return "output row stride " + std::to_string(ldy) + " < n " + std::to_string(w.n());
  if (col_begin == col_end) return "";
  if (a.path == BlockPath::kBlockSums) {
    // AVX-512 VNNI without AMX: the columns kernel at every M (its own tiles of rows from
    // 16); AMX: the columns kernel below one tile of rows, the tiles from there.
    if ((a.kernel == BlockKernel::kAmx && a.m < kBlockSumsMinRows && ColumnsKernelMinRows(a.kernel, a.type) > 0) ||
        a.kernel == BlockKernel::kAvx512Vnni) {
      block_matmul_internal::ColumnsAvx512(a, w, y, ldy, col_begin, col_end);
    } else if (a.kernel == BlockKernel::kAmx) {
      block_matmul_internal::AmxColumns(a, w, y, ldy, col_begin, col_end);
    } else {
      block_matmul_internal::ReferenceColumns(a, w, y, ldy, col_begin, col_end);
    }
    return "";
  }
  switch (a.kernel) {
    case BlockKernel::kAmx:
    case BlockKernel::kAvx512Vnni:
      block_matmul_internal::Avx512VnniColumns(a, w, y, ldy, col_begin, col_end);
      break;
    case BlockKernel::kAvx2:
      block_matmul_internal::Avx2Columns(a, w, y, ldy, col_begin, col_end);
      break;
    case BlockKernel::kReference:
      block_matmul_internal::ReferenceColumns(a, w, y, ldy, col_begin, col_end);
      break;
  }
  return "";
}

}  // namespace infera::quant
