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
// Thread-safe (constant data).
#ifndef INFERA_GGUF_GGML_TYPE_H_
#define INFERA_GGUF_GGML_TYPE_H_

#include <cstdint>
#include <string_view>

namespace infera::gguf {

// The ids as written in files (ggml's enum values).
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
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
  kBF16 = 30,
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
