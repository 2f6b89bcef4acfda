#include "llm/convert/output_types.h"

#include <cctype>

#include "common/str_cat.h"

namespace infera::llm::convert {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

absl::StatusOr<GgufTypeChoice> ParseGgufType(std::string_view name) {
  GgufTypeChoice c;
  c.name = std::string(name);
  const std::string upper = Upper(name);
  if (upper == "Q4_K_M") {
    c.matrices = quant::BlockType::kQ4_K;
    c.q4_k_m = true;
    return c;
  }
  const std::optional<quant::BlockType> t = quant::BlockTypeFromName(upper);
  if (!t) {
    return absl::InvalidArgumentError(StrCat("--type '", name,
                                             "' is not a GGUF type here (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, "
                                             "q5_1, q4_k, q5_k, q6_k, q4_k_m)"));
  }
  c.matrices = *t;
  return c;
}

quant::BlockType MatrixType(const GgufTypeChoice& choice, std::string_view gguf_name) {
  if (choice.q4_k_m && (EndsWith(gguf_name, "attn_v.weight") || EndsWith(gguf_name, "ffn_down.weight") ||
                        gguf_name == "output.weight")) {
    return quant::BlockType::kQ6_K;
  }
  return choice.matrices;
}

absl::StatusOr<WeightType> ParseSafetensorsType(std::string_view name) {
  const std::string upper = Upper(name);
  if (upper == "F32") return WeightType::kF32;
  if (upper == "F16") return WeightType::kF16;
  if (upper == "BF16") return WeightType::kBF16;
  return absl::InvalidArgumentError(
      StrCat("--type '", name, "' is not a safetensors type (f32, f16, bf16): quantised GGUF tensors are dequantised"));
}

quant::BlockType BlockTypeOf(WeightType type) {
  switch (type) {
    case WeightType::kF16:
      return quant::BlockType::kF16;
    case WeightType::kBF16:
      return quant::BlockType::kBF16;
    default:
      return quant::BlockType::kF32;
  }
}

}  // namespace infera::llm::convert
