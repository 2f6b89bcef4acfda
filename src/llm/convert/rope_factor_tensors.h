// The GGUF tensors that carry a LlamaConfig's per-frequency rope factors, written as
// llama.cpp's converter names them (docs/llm.md, "infera llm convert"):
//   - rope_scaling llama3 (Llama 3.1/3.2/3.3): `rope_freqs.weight`, F32 [head_dim / 2], the
//     divisor of each frequency: factor where the wavelength is longer than
//     original / low_freq_factor, 1 where it is shorter than original / high_freq_factor,
//     1 / ((1 - smooth) / factor + smooth) between (smooth = (original / wavelength -
//     low_freq_factor) / (high_freq_factor - low_freq_factor)), so base^(-2i/d) / divisor
//     is Hugging Face's llama3 frequency. The GGUF's frequencies equal the checkpoint's
//     within kRopeFrequencyTolerance (relative; float32 rounding of the divisor, the
//     product, the reciprocal and Hugging Face's own result: at most ~6 float32 ulps).
//   - per-frequency divisors read from a GGUF (type "" / "linear"): `rope_freqs.weight` as read.
//   - longrope (Phi-3): `rope_factors_short.weight` and `rope_factors_long.weight`, F32
//     [head_dim / 2], the config's short_factor and long_factor (the metadata keys
//     rope.scaling.original_context_length / attn_factor: gguf_architecture_keys.h).
// Configs without per-frequency factors have none.
//
// Thread-safe (pure functions).
#ifndef INFERA_LLM_CONVERT_ROPE_FACTOR_TENSORS_H_
#define INFERA_LLM_CONVERT_ROPE_FACTOR_TENSORS_H_

#include <string>
#include <vector>

#include "llm/llama_config.h"

namespace infera::llm::convert {

// 6 float32 ulps, relative (6 * 2^-24 = 3.6e-7) rounded up.
inline constexpr double kRopeFrequencyTolerance = 4e-7;

struct RopeFactorTensor {
  std::string name;           // GGUF tensor name
  std::vector<float> values;  // head_dim / 2, F32 as written
};

std::vector<RopeFactorTensor> RopeFactorTensors(const LlamaConfig& c);

// llama3's per-frequency divisors (see above); empty for another rope_scaling type.
std::vector<double> Llama3FrequencyDivisors(const LlamaConfig& c);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_ROPE_FACTOR_TENSORS_H_
