// The tensor types a conversion writes, from `--type`.
//
// To GGUF: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k (every
// matrix), or q4_k_m: Q4_K with Q6_K for attn_v, ffn_down and output (the tensors
// llama.cpp's Q4_K_M keeps at higher precision). Norms and biases are always F32.
// Quantised blocks come from quant/quantize.h (round to nearest; formats-compatible with
// llama.cpp, not its scale search). Without --type: the source's float type.
// To safetensors: f32, f16 or bf16; without --type, the GGUF's matrices' float type when
// they all share one, else f32 (quantised tensors are dequantised).
//
// Thread-safe (pure functions).
#ifndef INFERA_LLM_CONVERT_OUTPUT_TYPES_H_
#define INFERA_LLM_CONVERT_OUTPUT_TYPES_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "llm/safetensors.h"
#include "quant/block_types.h"

namespace infera::llm::convert {

struct GgufTypeChoice {
  quant::BlockType matrices = quant::BlockType::kF32;
  bool q4_k_m = false;
  std::string name;  // as given, for messages
};

absl::StatusOr<GgufTypeChoice> ParseGgufType(std::string_view name);
// The type of the matrix `gguf_name` under `choice`.
quant::BlockType MatrixType(const GgufTypeChoice& choice, std::string_view gguf_name);

absl::StatusOr<WeightType> ParseSafetensorsType(std::string_view name);
quant::BlockType BlockTypeOf(WeightType type);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_OUTPUT_TYPES_H_
