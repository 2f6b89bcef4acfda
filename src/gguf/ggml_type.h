// GgmlType: the tensor element types a GGUF file can name (the ggml type ids), with
// the facts a reader needs to size a tensor: values per block and bytes per block.
//
// A tensor of n elements along its first (fastest-varying) dimension takes
// n / block_size blocks of type_size bytes per row; n must be a multiple of block_size.
// Unquantised types have block_size 1 (F32: 1 value, 4 bytes). Ids that ggml retired
// (4, 5: Q4_2/Q4_3; 31-33, 36-38: repacked layouts that never appear in files) and ids
// past the table are unknown: FindGgmlType returns nullptr and the reader refuses the
// file naming the id.
//
// The eleven types with kernels (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K,
// Q6_K) take their ids, names and sizes from quant/block_types.h's kBlockTypes, the one
// table of them; ggml_type.cc lists only the other ids. The reader still knows those
// (it sizes their tensors, so a file holding one opens and LlamaWeights names the type
// it cannot run).
//
// Thread-safe (constant data).
#ifndef INFERA_GGUF_GGML_TYPE_H_
#define INFERA_GGUF_GGML_TYPE_H_

#include <cstdint>
#include <string_view>

#include "quant/block_types.h"

namespace infera::gguf {

// The ids as written in files (ggml's enum values); the kernels' from quant::BlockType.
enum class GgmlType : uint32_t {
  kF32 = static_cast<uint32_t>(quant::BlockType::kF32),
  kF16 = static_cast<uint32_t>(quant::BlockType::kF16),
  kQ4_0 = static_cast<uint32_t>(quant::BlockType::kQ4_0),
  kQ4_1 = static_cast<uint32_t>(quant::BlockType::kQ4_1),
  kQ5_0 = static_cast<uint32_t>(quant::BlockType::kQ5_0),
  kQ5_1 = static_cast<uint32_t>(quant::BlockType::kQ5_1),
  kQ8_0 = static_cast<uint32_t>(quant::BlockType::kQ8_0),
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = static_cast<uint32_t>(quant::BlockType::kQ4_K),
  kQ5_K = static_cast<uint32_t>(quant::BlockType::kQ5_K),
  kQ6_K = static_cast<uint32_t>(quant::BlockType::kQ6_K),
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = static_cast<uint32_t>(quant::BlockType::kBF16),
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
};

struct GgmlTypeInfo {
  GgmlType type;
  std::string_view name;  // "F32", "Q4_K", ... as ggml and gguf tools print them
  uint32_t block_size;    // values per block
  uint32_t type_size;     // bytes per block
};

// The entry for a raw id from a file, or nullptr for an unknown id.
const GgmlTypeInfo* FindGgmlType(uint32_t id);
// The entry for a known type (CHECK-fails on a value outside the enum).
const GgmlTypeInfo& GgmlTypeInfoOf(GgmlType type);
std::string_view GgmlTypeName(GgmlType type);

}  // namespace infera::gguf

#endif  // INFERA_GGUF_GGML_TYPE_H_
