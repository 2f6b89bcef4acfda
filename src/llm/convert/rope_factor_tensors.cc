#include "llm/convert/rope_factor_tensors.h"

#include <cmath>
#include <string>

#include "llm/gguf_llama_config.h"

namespace infera::llm::convert {
namespace {

std::vector<float> AsFloats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

}  // namespace

std::vector<double> Llama3FrequencyDivisors(const LlamaConfig& c) {
  const RopeScaling& s = c.rope_scaling;
  if (s.type != "llama3") return {};
  // The unscaled frequencies as the engine computes them (float32), which Hugging Face's
  // llama3 rule classifies by wavelength.
  LlamaConfig plain = c;
  plain.rope_scaling = RopeScaling();
  const std::vector<float> inv = plain.RopeInverseFrequencies();
  const double original = static_cast<double>(s.original_max_position_embeddings);
  const double low_wavelen = original / s.low_freq_factor;
  const double high_wavelen = original / s.high_freq_factor;
  std::vector<double> out;
  for (float f : inv) {
    const double wavelen = 2 * M_PI / f;
    if (wavelen > low_wavelen) {
      out.push_back(s.factor);
    } else if (wavelen >= high_wavelen) {
      const double smooth = (original / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      out.push_back(1.0 / ((1 - smooth) / s.factor + smooth));
    } else {
      out.push_back(1.0);
    }
  }
  return out;
}

std::vector<RopeFactorTensor> RopeFactorTensors(const LlamaConfig& c) {
  const RopeScaling& s = c.rope_scaling;
  if (s.type == "llama3") return {{std::string(kRopeFreqsTensor), AsFloats(Llama3FrequencyDivisors(c))}};
  if (s.type == "longrope") {
    return {{std::string(kRopeFactorsLongTensor), AsFloats(s.long_factor)},
            {std::string(kRopeFactorsShortTensor), AsFloats(s.frequency_divisors)}};
  }
  if (!s.frequency_divisors.empty()) return {{std::string(kRopeFreqsTensor), AsFloats(s.frequency_divisors)}};
  return {};
}

}  // namespace infera::llm::convert
