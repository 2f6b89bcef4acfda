#include "gguf/ggml_type.h"

#include <array>

#include "common/check.h"

namespace infera::gguf {
namespace {

// Block sizes and bytes per block from the block layouts the formats describe: e.g.
// Q4_0 is one fp16 scale + 32 4-bit values (2 + 16 = 18 bytes per 32 values); the
// K-quants group 256 values (Q4_K: 2 fp16 scales + 12 bytes of 6-bit sub-block
// scales + 128 bytes of 4-bit values = 144).
constexpr GgmlTypeInfo kTypes[] = {
    {GgmlType::kF32, "F32", 1, 4},
    {GgmlType::kF16, "F16", 1, 2},
    {GgmlType::kQ4_0, "Q4_0", 32, 18},
    {GgmlType::kQ4_1, "Q4_1", 32, 20},
    {GgmlType::kQ5_0, "Q5_0", 32, 22},
    {GgmlType::kQ5_1, "Q5_1", 32, 24},
    {GgmlType::kQ8_0, "Q8_0", 32, 34},
    {GgmlType::kQ8_1, "Q8_1", 32, 36},
    {GgmlType::kQ2_K, "Q2_K", 256, 84},
    {GgmlType::kQ3_K, "Q3_K", 256, 110},
    {GgmlType::kQ4_K, "Q4_K", 256, 144},
    {GgmlType::kQ5_K, "Q5_K", 256, 176},
    {GgmlType::kQ6_K, "Q6_K", 256, 210},
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
    {GgmlType::kBF16, "BF16", 1, 2},
    {GgmlType::kTQ1_0, "TQ1_0", 256, 54},
    {GgmlType::kTQ2_0, "TQ2_0", 256, 66},
    {GgmlType::kMXFP4, "MXFP4", 32, 17},
};

constexpr uint32_t kMaxId = 39;

// Id -> entry, nullptr for gaps.
constexpr std::array<const GgmlTypeInfo*, kMaxId + 1> BuildIndex() {
  std::array<const GgmlTypeInfo*, kMaxId + 1> index{};
  for (const GgmlTypeInfo& info : kTypes) index[static_cast<uint32_t>(info.type)] = &info;
  return index;
}

constexpr std::array<const GgmlTypeInfo*, kMaxId + 1> kIndex = BuildIndex();

}  // namespace

const GgmlTypeInfo* FindGgmlType(uint32_t id) { return id <= kMaxId ? kIndex[id] : nullptr; }

const GgmlTypeInfo& GgmlTypeInfoOf(GgmlType type) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  INFERA_CHECK(info != nullptr) << "not a ggml type: " << static_cast<uint32_t>(type);
  return *info;
}

std::string_view GgmlTypeName(GgmlType type) { return GgmlTypeInfoOf(type).name; }

}  // namespace infera::gguf
