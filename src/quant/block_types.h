// The GGUF tensor types that have kernels of their own (src/quant, docs/quant_kernels.md):
// ids as GGUF stores them (ggml's type enum), elements and bytes per block, names.
//
// A GGUF matrix of n rows × k columns stores each row as k / block_elements blocks, the
// rows one after another; every block starts with its own scales, so a row can be read
// (and a dot product computed) without any other row. Block layouts:
//
//   F32   1 elem,    4 B   the float
//   F16   1 elem,    2 B   IEEE half
//   BF16  1 elem,    2 B   bfloat16 (top half of a float)
//   Q8_0  32 elems, 34 B   half d; int8 q[32]                         w = d·q
//   Q4_0  32 elems, 18 B   half d; u8 qs[16]                          w = d·(u − 8)
//   Q4_1  32 elems, 20 B   half d, half m; u8 qs[16]                  w = d·u + m
//   Q5_0  32 elems, 22 B   half d; u8 qh[4]; u8 qs[16]                w = d·(u − 16)
//   Q5_1  32 elems, 24 B   half d, half m; u8 qh[4]; u8 qs[16]        w = d·u + m
//     4-bit u of element j: qs[j] & 15 for j < 16, qs[j − 16] >> 4 for j ≥ 16; the 5-bit
//     types add bit j of the little-endian 32-bit qh as bit 4.
//   Q4_K  256 elems, 144 B  half d, half dmin; u8 scales[12]; u8 qs[128]
//   Q5_K  256 elems, 176 B  half d, half dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]
//     eight sub-blocks of 32 with 6-bit scale sc[s] and 6-bit min mn[s] packed in the 12
//     bytes (s < 4: sc = b[s] & 63, mn = b[s+4] & 63; s ≥ 4: sc = (b[s+4] & 15) | (b[s−4] >> 6) << 4,
//     mn = (b[s+4] >> 4) | (b[s] >> 6) << 4); w = d·sc[s]·u − dmin·mn[s]. Elements 64c..64c+31
//     take the low nibbles of qs[32c..32c+32), 64c+32..64c+63 the high nibbles; Q5_K's bit 4
//     of element 64c + i (i < 32) is bit 2c of qh[i], of 64c + 32 + i bit 2c + 1.
//   Q6_K  256 elems, 210 B  u8 ql[128]; u8 qh[64]; int8 scales[16]; half d
//     sixteen sub-blocks of 16, w = d·scales[e / 16]·(u − 32), u 6-bit: for half h (128
//     elements; ql + 64h, qh + 32h) and i < 32: element 128h + i = ql[i] & 15 | (qh[i] & 3) << 4,
//     +32 + i: ql[32 + i] & 15 | (qh[i] >> 2 & 3) << 4, +64 + i: ql[i] >> 4 | (qh[i] >> 4 & 3) << 4,
//     +96 + i: ql[32 + i] >> 4 | (qh[i] >> 6 & 3) << 4.
// All multi-byte fields are little-endian.
//
// kBlockTypes is the one table of these eleven ids and sizes: the GGUF reader's
// gguf/ggml_type.cc takes their rows from it (a constexpr array, so it is read at compile
// time and the reader links no kernel code) and adds only the ids that have no kernel.
#ifndef INFERA_QUANT_BLOCK_TYPES_H_
#define INFERA_QUANT_BLOCK_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace infera::quant {

// The values are GGUF's type ids.
enum class BlockType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kBF16 = 30,
};

struct BlockTypeInfo {
  BlockType type;
  const char* name;        // "Q4_K", as GGUF tools print it
  int64_t block_elements;  // elements per block
  int64_t block_bytes;     // bytes per block
};

// The eleven supported types, in id order.
inline constexpr BlockTypeInfo kBlockTypes[] = {
    {BlockType::kF32, "F32", 1, 4},       {BlockType::kF16, "F16", 1, 2},
    {BlockType::kQ4_0, "Q4_0", 32, 18},   {BlockType::kQ4_1, "Q4_1", 32, 20},
    {BlockType::kQ5_0, "Q5_0", 32, 22},   {BlockType::kQ5_1, "Q5_1", 32, 24},
    {BlockType::kQ8_0, "Q8_0", 32, 34},   {BlockType::kQ4_K, "Q4_K", 256, 144},
    {BlockType::kQ5_K, "Q5_K", 256, 176}, {BlockType::kQ6_K, "Q6_K", 256, 210},
    {BlockType::kBF16, "BF16", 1, 2},
};
const BlockTypeInfo* AllBlockTypes(size_t* count);
// The type with GGUF id `id`, or nullopt for ids without a kernel here.
std::optional<BlockType> BlockTypeFromId(uint32_t id);
std::optional<BlockType> BlockTypeFromName(std::string_view name);
const BlockTypeInfo& Info(BlockType type);
inline const char* Name(BlockType type) { return Info(type).name; }
// True for the types whose blocks hold integers and scales (Q*), false for F32/F16/BF16.
bool IsQuantized(BlockType type);

// "" when k is a valid row length for the type, else a message naming the problem
// (k ≤ 0, k not a multiple of the block size).
std::string CheckRowLength(BlockType type, int64_t k);
// k / block_elements · block_bytes (k must pass CheckRowLength).
inline int64_t RowBytes(BlockType type, int64_t k) {
  const BlockTypeInfo& info = Info(type);
  return k / info.block_elements * info.block_bytes;
}

}  // namespace infera::quant

#endif  // INFERA_QUANT_BLOCK_TYPES_H_
