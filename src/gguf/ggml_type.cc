#include "gguf/ggml_type.h"

#include <array>

#include "common/check.h"

namespace infera::gguf {
namespace {

// The ids without a kernel here (the eleven with one come from quant::kBlockTypes).
// Block sizes and bytes per block from the block layouts the formats describe: e.g.
// Q2_K groups 256 values as 16 bytes of 4-bit scales + 64 bytes of 2-bit values + 2 fp16
// super-block scales = 84 bytes; Q8_1 is Q8_0 (2 + 32 bytes) plus an fp16 sum.
constexpr GgmlTypeInfo kTypesWithoutKernels[] = {
    {GgmlType::kQ8_1, "Q8_1", 32, 36},
    {GgmlType::kQ2_K, "Q2_K", 256, 84},
    {GgmlType::kQ3_K, "Q3_K", 256, 110},
    {GgmlType::kQ8_K, "Q8_K", 256, 292},
    {GgmlType::kIQ2_XXS, "IQ2_XXS", 256, 66},
    {GgmlType::kIQ2_XS, "IQ2_XS", 256, 74},
    {GgmlType::kIQ3_XXS, "IQ3_XXS", 256, 98},
    {GgmlType::kIQ1_S, "IQ1_S", 256, 50},
    {GgmlType::kIQ4_NL, "IQ4_NL", 32, 18},
    {GgmlType::kIQ3_S, "IQ3_S", 256, 110},
    {GgmlType::kIQ2_S, "IQ2_S", 256, 82},
    {GgmlType::kIQ4_XS, "IQ4_XS", 256, 136},
    {GgmlType::kI8, "I8", 1, 1},
    {GgmlType::kI16, "I16", 1, 2},
    {GgmlType::kI32, "I32", 1, 4},
    {GgmlType::kI64, "I64", 1, 8},
    {GgmlType::kF64, "F64", 1, 8},
    {GgmlType::kIQ1_M, "IQ1_M", 256, 56},
    {GgmlType::kTQ1_0, "TQ1_0", 256, 54},
    {GgmlType::kTQ2_0, "TQ2_0", 256, 66},
    {GgmlType::kMXFP4, "MXFP4", 32, 17},
};

constexpr uint32_t kMaxId = 39;

// Id -> entry; block_size 0 marks an unknown id.
using Table = std::array<GgmlTypeInfo, kMaxId + 1>;

constexpr void Put(Table& table, const GgmlTypeInfo& info) {
  const auto id = static_cast<uint32_t>(info.type);
  // Not a constant expression (a compile error) when an id is past kMaxId or in both lists.
  if (id > kMaxId || table[id].block_size != 0) throw "ggml type id listed twice or past kMaxId";
  table[id] = info;
}

constexpr Table BuildTable() {
  Table table{};
  for (const quant::BlockTypeInfo& kernel : quant::kBlockTypes) {
    Put(table, {static_cast<GgmlType>(kernel.type), kernel.name, static_cast<uint32_t>(kernel.block_elements),
                static_cast<uint32_t>(kernel.block_bytes)});
  }
  for (const GgmlTypeInfo& info : kTypesWithoutKernels) Put(table, info);
  return table;
}

constexpr Table kTable = BuildTable();

}  // namespace

const GgmlTypeInfo* FindGgmlType(uint32_t id) {
  return id <= kMaxId && kTable[id].block_size != 0 ? &kTable[id] : nullptr;
}

const GgmlTypeInfo& GgmlTypeInfoOf(GgmlType type) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  INFERA_CHECK(info != nullptr) << "not a ggml type: " << static_cast<uint32_t>(type);
  return *info;
}

std::string_view GgmlTypeName(GgmlType type) { return GgmlTypeInfoOf(type).name; }

}  // namespace infera::gguf
