#include "quant/block_types.h"

#include <cstdlib>

namespace infera::quant {
namespace {

constexpr BlockTypeInfo kTypes[] = {
    {BlockType::kF32, "F32", 1, 4},       {BlockType::kF16, "F16", 1, 2},
    {BlockType::kQ4_0, "Q4_0", 32, 18},   {BlockType::kQ4_1, "Q4_1", 32, 20},
    {BlockType::kQ5_0, "Q5_0", 32, 22},   {BlockType::kQ5_1, "Q5_1", 32, 24},
    {BlockType::kQ8_0, "Q8_0", 32, 34},   {BlockType::kQ4_K, "Q4_K", 256, 144},
    {BlockType::kQ5_K, "Q5_K", 256, 176}, {BlockType::kQ6_K, "Q6_K", 256, 210},
    {BlockType::kBF16, "BF16", 1, 2},
};

}  // namespace

const BlockTypeInfo* AllBlockTypes(size_t* count) {
  *count = sizeof(kTypes) / sizeof(kTypes[0]);
  return kTypes;
}

std::optional<BlockType> BlockTypeFromId(uint32_t id) {
  for (const BlockTypeInfo& info : kTypes) {
    if (static_cast<uint32_t>(info.type) == id) return info.type;
  }
  return std::nullopt;
}

std::optional<BlockType> BlockTypeFromName(std::string_view name) {
  for (const BlockTypeInfo& info : kTypes) {
    if (name == info.name) return info.type;
  }
  return std::nullopt;
}

const BlockTypeInfo& Info(BlockType type) {
  for (const BlockTypeInfo& info : kTypes) {
    if (info.type == type) return info;
  }
  std::abort();  // every enumerator is in the table
}

bool IsQuantized(BlockType type) { return Info(type).block_elements > 1; }

std::string CheckRowLength(BlockType type, int64_t k) {
  const BlockTypeInfo& info = Info(type);
  if (k <= 0) return std::string(info.name) + " row length must be positive, got " + std::to_string(k);
  if (k % info.block_elements != 0) {
    return std::string(info.name) + " row length " + std::to_string(k) + " is not a multiple of its block size " +
           std::to_string(info.block_elements);
  }
  return "";
}

}  // namespace infera::quant
