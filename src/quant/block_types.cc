#include "quant/block_types.h"

#include <cstdlib>
#include <iterator>

namespace infera::quant {

const BlockTypeInfo* AllBlockTypes(size_t* count) {
  *count = std::size(kBlockTypes);
  return kBlockTypes;
}

std::optional<BlockType> BlockTypeFromId(uint32_t id) {
  for (const BlockTypeInfo& info : kBlockTypes) {
    if (static_cast<uint32_t>(info.type) == id) return info.type;
  }
  return std::nullopt;
}

std::optional<BlockType> BlockTypeFromName(std::string_view name) {
  for (const BlockTypeInfo& info : kBlockTypes) {
    if (name == info.name) return info.type;
  }
  return std::nullopt;
}

const BlockTypeInfo& Info(BlockType type) {
  for (const BlockTypeInfo& info : kBlockTypes) {
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
