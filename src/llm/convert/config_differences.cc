#include "llm/convert/config_differences.h"

#include <algorithm>
#include <cmath>

#include "common/str_cat.h"

namespace infera::llm::convert {

namespace {

// Relative: a GGUF stores the base and factors as float32 (llama3's divisors:
// rope_factor_tensors.h's bound, 4e-7).
constexpr double kFrequencyTolerance = 1e-6;

}  // namespace

std::vector<std::string> ConfigDifferences(const LlamaConfig& a, const LlamaConfig& b) {
  std::vector<std::string> out;
  auto exact = [&](const char* field, auto x, auto y) {
    if (x != y) out.push_back(StrCat(field, ": ", x, " vs ", y));
  };
  auto close = [&](const char* field, double x, double y) {
    if (std::abs(x - y) > 1e-5 * std::max(std::abs(x), std::abs(y))) out.push_back(StrCat(field, ": ", x, " vs ", y));
  };
  exact("vocab_size", a.vocab_size, b.vocab_size);
  exact("hidden_size", a.hidden_size, b.hidden_size);
  exact("intermediate_size", a.intermediate_size, b.intermediate_size);
  exact("num_hidden_layers", a.num_layers, b.num_layers);
  exact("num_attention_heads", a.num_heads, b.num_heads);
  exact("num_key_value_heads", a.num_kv_heads, b.num_kv_heads);
  exact("head_dim", a.head_dim, b.head_dim);
  exact("max_position_embeddings", a.max_position_embeddings, b.max_position_embeddings);
  close("rms_norm_eps", a.rms_norm_eps, b.rms_norm_eps);
  close("rope_theta", a.rope_theta, b.rope_theta);
  // Rope scaling by its effect: the frequencies (llama3's parameters in config.json are
  // per-frequency divisors in GGUF), the cos/sin scale, and longrope's served length.
  const RopeScaling &ra = a.rope_scaling, &rb = b.rope_scaling;
  exact("rope_scaling longrope", ra.type == "longrope" ? "yes" : "no", rb.type == "longrope" ? "yes" : "no");
  if (ra.type == "longrope" && rb.type == "longrope") {
    exact("original_max_position_embeddings", ra.original_max_position_embeddings,
          rb.original_max_position_embeddings);
    exact("rope_scaling.long_factor count", ra.long_factor.size(), rb.long_factor.size());
    for (size_t i = 0; i < std::min(ra.long_factor.size(), rb.long_factor.size()); ++i) {
      close("rope_scaling.long_factor", ra.long_factor[i], rb.long_factor[i]);
    }
  }
  close("rope attention factor", ra.attention_factor, rb.attention_factor);
  if (a.head_dim == b.head_dim) {
    const std::vector<float> fa = a.RopeInverseFrequencies(), fb = b.RopeInverseFrequencies();
    for (size_t i = 0; i < fa.size(); ++i) {
      if (std::abs(fa[i] - fb[i]) > kFrequencyTolerance * std::max(std::abs(fa[i]), std::abs(fb[i]))) {
        out.push_back(StrCat("rope frequency ", i, ": ", fa[i], " vs ", fb[i]));
        break;
      }
    }
  }
  for (int64_t i = 0; i < std::max(a.num_layers, b.num_layers); ++i) {
    if (a.WindowOf(i) != b.WindowOf(i)) {
      out.push_back(StrCat("layer ", i, " sliding window: ", a.WindowOf(i), " vs ", b.WindowOf(i)));
    }
  }
  exact("activation", a.activation == MlpActivation::kSilu ? "silu" : "gelu_pytorch_tanh",
        b.activation == MlpActivation::kSilu ? "silu" : "gelu_pytorch_tanh");
  exact("fused qkv / gate_up", a.fused_weights, b.fused_weights);
  exact("q/k norm", a.qk_norm, b.qk_norm);
  exact("gemma conventions", a.gemma, b.gemma);
  close("embedding scale", a.embedding_scale, b.embedding_scale);
  if (a.gemma || b.gemma) close("query_pre_attn_scalar", a.query_pre_attn_scalar, b.query_pre_attn_scalar);
  close("attn_logit_softcapping", a.attn_logit_softcapping, b.attn_logit_softcapping);
  close("final_logit_softcapping", a.final_logit_softcapping, b.final_logit_softcapping);
  close("rope_local_base_freq", a.rope_local_theta, b.rope_local_theta);
  exact("tie_word_embeddings", a.tie_word_embeddings, b.tie_word_embeddings);
  return out;
}

}  // namespace infera::llm::convert
