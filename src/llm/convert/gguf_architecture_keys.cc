#include "llm/convert/gguf_architecture_keys.h"

#include <cmath>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera::llm::convert {
namespace {

// Which layers the GGUF reader makes slide for `arch` (gguf_llama_config.cc).
bool GgufSlides(const std::string& arch, int64_t layer, int64_t pattern) {
  if (arch == "gemma2") return layer % 2 == 0;
  if (arch == "gemma3") return (layer + 1) % pattern != 0;
  return true;
}

bool WindowsMatch(const LlamaConfig& c, const std::string& arch, int64_t pattern) {
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const int64_t want = GgufSlides(arch, i, pattern) ? c.sliding_window : 0;
    if (c.WindowOf(i) != want) return false;
  }
  return true;
}

std::string WindowList(const LlamaConfig& c) {
  std::vector<int64_t> w;
  for (int64_t i = 0; i < c.num_layers; ++i) w.push_back(c.WindowOf(i));
  return StrCat("[", StrJoin(w, ","), "]");
}

}  // namespace

absl::StatusOr<std::string> GgufArchitecture(const LlamaConfig& c) {
  const std::string& t = c.model_type;
  if (t == "llama" || t == "mistral") return std::string("llama");
  if (t == "qwen2" || t == "qwen3" || t == "phi3" || t == "gemma2") return t;
  if (t == "gemma3_text") return std::string("gemma3");
  return absl::InvalidArgumentError(
      StrCat("model_type '", t, "' has no GGUF architecture here (llama, mistral, qwen2, qwen3, phi3, gemma2, "
                                "gemma3_text)"));
}

absl::Status AddArchitectureKeys(const LlamaConfig& c, std::string_view name, GgufWriter& w) {
  ASSIGN_OR_RETURN(std::string arch, GgufArchitecture(c));
  const std::string& rs = c.rope_scaling.type;
  if (!rs.empty() && rs != "linear" && rs != "llama3" && rs != "longrope" && rs != "yarn") {
    return absl::InvalidArgumentError(StrCat("rope_scaling type '", rs,
                                             "' cannot be written as GGUF (none, linear, llama3, longrope, yarn)"));
  }
  // GGUF has no keys for yarn's ramp: readers (llama.cpp, infera) take beta_fast 32,
  // beta_slow 1 and whole-dimension bounds.
  const RopeScaling& yarn = c.rope_scaling;
  if (rs == "yarn" && (yarn.beta_fast != 32.0 || yarn.beta_slow != 1.0 || !yarn.truncate)) {
    return absl::InvalidArgumentError(StrCat("rope_scaling yarn with beta_fast ", yarn.beta_fast, ", beta_slow ",
                                             yarn.beta_slow, ", truncate ", yarn.truncate ? "true" : "false",
                                             " cannot be written as GGUF (only 32, 1, true)"));
  }
  int64_t pattern = 6;
  if (c.sliding_window > 0) {
    if (arch == "qwen2" || arch == "qwen3") {
      return absl::InvalidArgumentError(StrCat("sliding windows on ", arch, " cannot be written as GGUF metadata"));
    }
    if (arch == "gemma3") {
      // The smallest period that gives these layers (6 when the model is shorter).
      bool found = WindowsMatch(c, arch, 6);
      for (int64_t p = 1; !found && p <= c.num_layers + 1; ++p) {
        pattern = p;
        found = WindowsMatch(c, arch, p);
      }
      if (!found) pattern = 0;
    }
    if (pattern == 0 || !WindowsMatch(c, arch, pattern)) {
      return absl::InvalidArgumentError(StrCat("per-layer sliding windows ", WindowList(c),
                                               " cannot be written as GGUF ", arch, " metadata"));
    }
  } else if (arch == "gemma3") {
    return absl::InvalidArgumentError("gemma3 without sliding windows cannot be written as GGUF metadata");
  }
  if (c.rope_local_theta > 0 && c.rope_local_theta != 10000.0) {
    return absl::InvalidArgumentError(
        StrCat("rope_local_base_freq ", c.rope_local_theta, " cannot be written as GGUF metadata (10000 only)"));
  }
  auto key = [&](std::string_view k) { return StrCat(arch, ".", k); };
  w.AddString("general.architecture", arch);
  w.AddString("general.name", name);
  w.AddUint32(key("block_count"), static_cast<uint32_t>(c.num_layers));
  w.AddUint32(key("context_length"), static_cast<uint32_t>(c.max_position_embeddings));
  w.AddUint32(key("embedding_length"), static_cast<uint32_t>(c.hidden_size));
  w.AddUint32(key("feed_forward_length"), static_cast<uint32_t>(c.intermediate_size));
  w.AddUint32(key("attention.head_count"), static_cast<uint32_t>(c.num_heads));
  w.AddUint32(key("attention.head_count_kv"), static_cast<uint32_t>(c.num_kv_heads));
  w.AddUint32(key("attention.key_length"), static_cast<uint32_t>(c.head_dim));
  w.AddUint32(key("attention.value_length"), static_cast<uint32_t>(c.head_dim));
  w.AddUint32(key("rope.dimension_count"), static_cast<uint32_t>(c.head_dim));
  w.AddFloat32(key("attention.layer_norm_rms_epsilon"), static_cast<float>(c.rms_norm_eps));
  w.AddFloat32(key("rope.freq_base"), static_cast<float>(c.rope_theta));
  if (rs == "linear") {
    w.AddString(key("rope.scaling.type"), "linear");
    w.AddFloat32(key("rope.scaling.factor"), static_cast<float>(c.rope_scaling.factor));
  }
  if (rs == "yarn") {
    // The reader's attention factor is attn_factor × (0.1 ln factor + 1): the key only
    // where the config's differs from the derived one.
    w.AddString(key("rope.scaling.type"), "yarn");
    w.AddFloat32(key("rope.scaling.factor"), static_cast<float>(yarn.factor));
    w.AddUint32(key("rope.scaling.original_context_length"),
                static_cast<uint32_t>(yarn.original_max_position_embeddings));
    const double derived = YarnAttentionFactor(yarn.factor);
    if (std::abs(yarn.attention_factor - derived) > 1e-6 * derived) {
      w.AddFloat32(key("rope.scaling.attn_factor"), static_cast<float>(yarn.attention_factor / derived));
    }
  }
  if (rs == "longrope") {  // the factors themselves are tensors (rope_factor_tensors.h)
    w.AddUint32(key("rope.scaling.original_context_length"),
                static_cast<uint32_t>(c.rope_scaling.original_max_position_embeddings));
    w.AddFloat32(key("rope.scaling.attn_factor"), static_cast<float>(c.rope_scaling.attention_factor));
  }
  if (c.sliding_window > 0) w.AddUint32(key("attention.sliding_window"), static_cast<uint32_t>(c.sliding_window));
  if (arch == "gemma3") w.AddUint32(key("attention.sliding_window_pattern"), static_cast<uint32_t>(pattern));
  if (c.gemma) w.AddFloat32(key("attention.scale"), static_cast<float>(1.0 / std::sqrt(c.query_pre_attn_scalar)));
  if (c.attn_logit_softcapping > 0) {
    w.AddFloat32(key("attn_logit_softcapping"), static_cast<float>(c.attn_logit_softcapping));
  }
  if (c.final_logit_softcapping > 0) {
    w.AddFloat32(key("final_logit_softcapping"), static_cast<float>(c.final_logit_softcapping));
  }
  return absl::OkStatus();
}

}  // namespace infera::llm::convert
