#include "llm/gguf_llama_config.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <system_error>
#include <vector>

#include "api/float16.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace infera::llm {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Reads `<arch>.<key>` as a positive integer within `limit`.
class Keys {
 public:
  Keys(const gguf::GgufFile& file, std::string arch) : file_(file), arch_(std::move(arch)) {}
  std::string Name(std::string_view key) const { return StrCat(arch_, ".", key); }
  bool Has(std::string_view key) const { return file_.metadata().Has(Name(key)); }

  absl::StatusOr<int64_t> Positive(std::string_view key, int64_t limit) const {
    auto v = file_.metadata().GetUint(Name(key));
    if (!v.ok()) return Error(std::string(v.status().message()));
    if (*v == 0 || *v > static_cast<uint64_t>(limit)) {
      return Error(StrCat("'", Name(key), "' is ", *v, "; it must be in 1..", limit));
    }
    return static_cast<int64_t>(*v);
  }
  absl::StatusOr<int64_t> PositiveOr(std::string_view key, int64_t limit, int64_t fallback) const {
    if (!Has(key)) return fallback;
    return Positive(key, limit);
  }
  absl::StatusOr<double> FloatOr(std::string_view key, double fallback) const {
    if (!Has(key)) return fallback;
    auto v = file_.metadata().GetFloat(Name(key));
    if (!v.ok()) return Error(std::string(v.status().message()));
    if (!std::isfinite(*v)) return Error(StrCat("'", Name(key), "' is not finite"));
    return *v;
  }
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(StrCat(file_.where(), ": ", what));
  }

 private:
  const gguf::GgufFile& file_;
  std::string arch_;
};

constexpr int64_t kMaxLayers = 4096, kMaxHeads = 4096, kMaxHeadDim = 4096, kMaxWidth = int64_t{1} << 24;

// A per-frequency rope factor tensor (rope_freqs, rope_factors_short / _long): F32 or
// F16, exactly `half` (= head_dim / 2) elements, each finite and > 0 (they divide the
// frequencies).
absl::StatusOr<std::vector<double>> ReadRopeFactors(const gguf::GgufTensor& t, int64_t half, const Keys& k) {
  if (t.type != gguf::GgmlType::kF32 && t.type != gguf::GgmlType::kF16) {
    return k.Error(StrCat("tensor '", t.name, "' has type ", gguf::GgmlTypeName(t.type),
                          "; rope factors must be F32 or F16"));
  }
  if (t.dims.empty() || t.dims[0] != half || t.NumElements() != half) {
    return k.Error(StrCat("tensor '", t.name, "' has dims [", StrJoin(t.dims, ","), "]; rope factors need head_dim / 2 = ",
                          half, " elements"));
  }
  std::vector<double> out(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    float v;
    if (t.type == gguf::GgmlType::kF32) {
      std::memcpy(&v, t.data + 4 * i, 4);  // the data may sit at any alignment (FromBytes)
    } else {
      uint16_t h;
      std::memcpy(&h, t.data + 2 * i, 2);
      v = HalfToFloat(h);
    }
    if (!std::isfinite(v) || !(v > 0)) {
      return k.Error(StrCat("tensor '", t.name, "' element ", i, " is ", v, ": rope factors must be finite and > 0"));
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

// Per-frequency rope factors (docs/llm.md, "GGUF models"):
//  - rope_freqs.weight (llama.cpp's form of Llama 3.1's llama3 scaling): frequency i is
//    base^(-2i/d) / rope_freqs[i] at every position (and then rope.scaling's linear factor);
//  - rope_factors_short.weight + rope_factors_long.weight (Phi-3's longrope): the short
//    factors divide the frequencies up to <arch>.rope.scaling.original_context_length
//    (default: context_length), the only lengths served; the long ones are validated and
//    kept. cos/sin are scaled by <arch>.rope.scaling.attn_factor, or as Hugging Face derives
//    it: sqrt(1 + ln(s) / ln(original)) for s = context_length / original > 1, else 1.
absl::Status ReadRopeFactorTensors(const gguf::GgufFile& file, const Keys& k, LlamaConfig& c) {
  const gguf::GgufTensor* freqs = file.FindTensor(kRopeFreqsTensor);
  const gguf::GgufTensor* short_factors = file.FindTensor(kRopeFactorsShortTensor);
  const gguf::GgufTensor* long_factors = file.FindTensor(kRopeFactorsLongTensor);
  const int64_t half = c.head_dim / 2;
  RopeScaling& s = c.rope_scaling;
  if (freqs != nullptr && (short_factors != nullptr || long_factors != nullptr)) {
    return k.Error(StrCat("tensor '", kRopeFreqsTensor, "' and tensor '",
                          short_factors != nullptr ? short_factors->name : long_factors->name,
                          "' both give per-frequency rope factors (one set only)"));
  }
  // A positive factor can still be so small (a float32 denormal) that 1 / (factor · base^e)
  // overflows: refused, naming the element, rather than served as NaN angles.
  auto frequencies_finite = [&](const gguf::GgufTensor& t) -> absl::Status {
    const std::vector<float> inv = c.RopeInverseFrequencies();
    for (size_t i = 0; i < inv.size(); ++i) {
      if (!std::isfinite(inv[i]) || !(inv[i] > 0)) {
        return k.Error(StrCat("tensor '", t.name, "' element ", i, " (", s.frequency_divisors[i],
                              ") makes rotary frequency ", i, " ", inv[i]));
      }
    }
    return absl::OkStatus();
  };
  if (freqs != nullptr) {
    ASSIGN_OR_RETURN(s.frequency_divisors, ReadRopeFactors(*freqs, half, k));
    return frequencies_finite(*freqs);
  } else if (short_factors != nullptr || long_factors != nullptr) {
    if (short_factors == nullptr || long_factors == nullptr) {
      return k.Error(StrCat("tensor '", short_factors == nullptr ? kRopeFactorsShortTensor : kRopeFactorsLongTensor,
                            "' is missing (Phi-3's longrope needs both rope_factors_short and rope_factors_long)"));
    }
    if (!s.type.empty()) {
      return k.Error(StrCat("'", k.Name("rope.scaling.type"), "' ", s.type,
                            " cannot be combined with Phi-3's rope_factors tensors"));
    }
    ASSIGN_OR_RETURN(s.frequency_divisors, ReadRopeFactors(*short_factors, half, k));
    ASSIGN_OR_RETURN(s.long_factor, ReadRopeFactors(*long_factors, half, k));
    s.type = "longrope";
    ASSIGN_OR_RETURN(s.original_max_position_embeddings,
                     k.PositiveOr("rope.scaling.original_context_length", kMaxWidth, c.max_position_embeddings));
    const double original = static_cast<double>(s.original_max_position_embeddings);
    s.factor = static_cast<double>(c.max_position_embeddings) / original;
    const double derived = LongRopeAttentionFactor(s.factor, original);
    ASSIGN_OR_RETURN(s.attention_factor, k.FloatOr("rope.scaling.attn_factor", derived));
    if (!std::isfinite(s.attention_factor) || !(s.attention_factor > 0)) {  // derived: an original length of 1
      return k.Error(StrCat("the rope attention factor ('", k.Name("rope.scaling.attn_factor"),
                            "', or derived from context_length / original_context_length) is ", s.attention_factor,
                            "; it must be finite and > 0"));
    }
    return frequencies_finite(*short_factors);
  }
  // Elsewhere an attention factor other than 1 has no meaning the engine implements.
  ASSIGN_OR_RETURN(double attn_factor, k.FloatOr("rope.scaling.attn_factor", 1.0));
  if (attn_factor != 1.0) {
    return k.Error(StrCat("'", k.Name("rope.scaling.attn_factor"), "' ", attn_factor,
                          " is supported only with Phi-3's rope_factors tensors"));
  }
  return absl::OkStatus();
}

// YaRN as llama.cpp reads it from GGUF (docs/llm.md, "YaRN in GGUF files"):
// <arch>.rope.scaling.factor (≥ 1), .original_context_length (default context_length)
// and .attn_factor (default 1), which multiplies the derived 0.1 · ln(factor) + 1;
// beta_fast 32 and beta_slow 1 (not GGUF keys: llama.cpp's defaults, as Hugging Face's);
// the ramp's bounds rounded outwards (ggml_rope_yarn_corr_dims, Hugging Face's truncate).
// So a file converted from a config.json with yarn computes what that config computes.
// yarn_log_multiplier (DeepSeek-2's form) is refused.
absl::Status ReadYarn(const Keys& k, LlamaConfig& c) {
  RopeScaling& s = c.rope_scaling;
  if (k.Has("rope.scaling.yarn_log_multiplier")) {
    return k.Error(StrCat("'", k.Name("rope.scaling.yarn_log_multiplier"), "' is not supported (yarn's attention ",
                          "factor is 0.1 * ln(factor) + 1 times 'rope.scaling.attn_factor')"));
  }
  if (!k.Has("rope.scaling.factor")) {
    return k.Error(StrCat("'", k.Name("rope.scaling.type"), "' yarn needs '", k.Name("rope.scaling.factor"), "'"));
  }
  ASSIGN_OR_RETURN(s.factor, k.FloatOr("rope.scaling.factor", 1.0));
  if (!std::isfinite(s.factor) || s.factor < 1.0) {
    return k.Error(StrCat("'", k.Name("rope.scaling.factor"), "' ", s.factor, " must be finite and >= 1 for yarn"));
  }
  s.type = "yarn";
  ASSIGN_OR_RETURN(s.original_max_position_embeddings,
                   k.PositiveOr("rope.scaling.original_context_length", kMaxWidth, c.max_position_embeddings));
  s.beta_fast = 32.0;
  s.beta_slow = 1.0;
  s.truncate = true;
  ASSIGN_OR_RETURN(const double attn_factor, k.FloatOr("rope.scaling.attn_factor", 1.0));
  s.attention_factor = attn_factor * YarnAttentionFactor(s.factor);
  if (!std::isfinite(s.attention_factor) || !(s.attention_factor > 0)) {
    return k.Error(StrCat("'", k.Name("rope.scaling.attn_factor"), "' ", attn_factor,
                          " gives yarn an attention factor of ", s.attention_factor, "; it must be finite and > 0"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<std::filesystem::path>> FindGgufModelFile(const std::filesystem::path& version_dir,
                                                                        const std::string& default_model_filename) {
  if (EndsWith(default_model_filename, ".gguf")) {
    if (default_model_filename.find('/') != std::string::npos || default_model_filename == ".gguf") {
      return absl::InvalidArgumentError(
          StrCat("default_model_filename '", default_model_filename, "' must be a plain file name"));
    }
    std::filesystem::path path = version_dir / default_model_filename;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return absl::InvalidArgumentError(
          StrCat("default_model_filename '", default_model_filename, "' is not a file in ", version_dir.string()));
    }
    return path;
  }
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(version_dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (EndsWith(name, ".gguf")) found.push_back(name);
  }
  if (found.empty()) return std::optional<std::filesystem::path>();
  if (found.size() > 1) {
    std::sort(found.begin(), found.end());
    return absl::InvalidArgumentError(StrCat(version_dir.string(), " holds ", found.size(), " GGUF files (",
                                             StrJoin(found, ", "),
                                             "): name the model with default_model_filename"));
  }
  return version_dir / found[0];
}

absl::StatusOr<LlamaConfig> LlamaConfigFromGguf(const gguf::GgufFile& file) {
  const gguf::GgufMetadata& md = file.metadata();
  auto arch_or = md.GetString("general.architecture");
  if (!arch_or.ok()) return absl::InvalidArgumentError(StrCat(file.where(), ": ", arch_or.status().message()));
  const std::string arch(*arch_or);
  LlamaConfig c;
  if (arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "phi3" || arch == "gemma2") {
    c.model_type = arch;
  } else if (arch == "gemma3") {
    c.model_type = "gemma3_text";
  } else {
    return absl::InvalidArgumentError(StrCat(file.where(), ": general.architecture '", arch,
                                             "' is not supported (llama, qwen2, qwen3, phi3, gemma2, gemma3)"));
  }
  Keys k(file, arch);
  ASSIGN_OR_RETURN(c.num_layers, k.Positive("block_count", kMaxLayers));
  ASSIGN_OR_RETURN(c.hidden_size, k.Positive("embedding_length", kMaxWidth));
  ASSIGN_OR_RETURN(c.intermediate_size, k.Positive("feed_forward_length", kMaxWidth));
  ASSIGN_OR_RETURN(c.num_heads, k.Positive("attention.head_count", kMaxHeads));
  ASSIGN_OR_RETURN(c.num_kv_heads, k.PositiveOr("attention.head_count_kv", kMaxHeads, c.num_heads));
  if (c.num_heads % c.num_kv_heads != 0) {
    return k.Error(StrCat("attention.head_count ", c.num_heads, " is not a multiple of attention.head_count_kv ",
                          c.num_kv_heads));
  }
  ASSIGN_OR_RETURN(c.head_dim, k.PositiveOr("attention.key_length", kMaxHeadDim, c.hidden_size / c.num_heads));
  ASSIGN_OR_RETURN(int64_t value_length, k.PositiveOr("attention.value_length", kMaxHeadDim, c.head_dim));
  if (value_length != c.head_dim || c.head_dim % 2 != 0 || c.head_dim == 0) {
    return k.Error(StrCat("'", k.Name("attention.value_length"), "' ", value_length, " with key_length ", c.head_dim,
                          ": the engine needs equal, even head sizes"));
  }
  ASSIGN_OR_RETURN(int64_t rope_dims, k.PositiveOr("rope.dimension_count", kMaxHeadDim, c.head_dim));
  if (rope_dims != c.head_dim) {
    return k.Error(StrCat("'", k.Name("rope.dimension_count"), "' is ", rope_dims,
                          ": partial rotary embeddings (fewer dimensions than the head's ", c.head_dim,
                          ") are not supported"));
  }
  ASSIGN_OR_RETURN(c.rms_norm_eps, k.FloatOr("attention.layer_norm_rms_epsilon", 1e-6));
  if (!(c.rms_norm_eps > 0)) return k.Error(StrCat("'", k.Name("attention.layer_norm_rms_epsilon"), "' must be > 0"));
  const bool gemma3 = arch == "gemma3";
  ASSIGN_OR_RETURN(c.rope_theta, k.FloatOr("rope.freq_base", gemma3 ? 1000000.0 : 10000.0));
  if (!(c.rope_theta > 0)) return k.Error(StrCat("'", k.Name("rope.freq_base"), "' must be > 0"));
  ASSIGN_OR_RETURN(c.max_position_embeddings, k.PositiveOr("context_length", kMaxWidth, 2048));

  // Rope scaling: none, linear or yarn (the GGUF keys carry no llama3 parameters: llama
  // 3.1's factors come as a rope_freqs tensor, Phi-3's longrope as rope_factors_short /
  // _long: ReadRopeFactorTensors).
  if (k.Has("rope.scaling.type")) {
    auto type = md.GetString(k.Name("rope.scaling.type"));
    if (!type.ok()) return k.Error(std::string(type.status().message()));
    if (*type == "linear") {
      ASSIGN_OR_RETURN(double factor, k.FloatOr("rope.scaling.factor", 1.0));
      if (!(factor > 0)) return k.Error(StrCat("'", k.Name("rope.scaling.factor"), "' must be > 0"));
      if (factor != 1.0) {
        c.rope_scaling.type = "linear";
        c.rope_scaling.factor = factor;
      }
    } else if (*type == "yarn") {
      RETURN_IF_ERROR(ReadYarn(k, c));
    } else if (*type != "none") {
      return k.Error(StrCat("'", k.Name("rope.scaling.type"), "' '", *type,
                            "' is not supported (none, linear, yarn)"));
    }
  }
  if (c.rope_scaling.type == "yarn") {
    // Not with per-frequency factor tensors: llama.cpp multiplies them in, Hugging Face's
    // yarn has no such factors, and no reference defines the combination.
    for (std::string_view t : {kRopeFreqsTensor, kRopeFactorsShortTensor, kRopeFactorsLongTensor}) {
      if (file.FindTensor(t) != nullptr) {
        return k.Error(StrCat("tensor '", t, "' cannot be combined with '", k.Name("rope.scaling.type"), "' yarn"));
      }
    }
  } else {
    RETURN_IF_ERROR(ReadRopeFactorTensors(file, k, c));
  }

  c.qk_norm = arch == "qwen3" || gemma3;
  c.fused_weights = arch == "phi3";
  c.gemma = arch == "gemma2" || gemma3;
  if (c.gemma) {
    c.activation = MlpActivation::kGeluTanh;
    c.embedding_scale = std::sqrt(static_cast<double>(c.hidden_size));
    // GGUF has no query_pre_attn_scalar: scores are scaled by 1/sqrt(head_dim) unless the
    // file says otherwise in <arch>.attention.scale (= query_pre_attn_scalar^-1/2).
    ASSIGN_OR_RETURN(double scale, k.FloatOr("attention.scale", 0.0));
    c.query_pre_attn_scalar = scale > 0 ? 1.0 / (scale * scale) : static_cast<double>(c.head_dim);
    if (gemma3) c.rope_local_theta = 10000.0;
  }
  ASSIGN_OR_RETURN(c.attn_logit_softcapping, k.FloatOr("attn_logit_softcapping", 0.0));
  ASSIGN_OR_RETURN(c.final_logit_softcapping, k.FloatOr("final_logit_softcapping", 0.0));
  if (c.attn_logit_softcapping < 0 || c.final_logit_softcapping < 0) {
    return k.Error("logit soft-capping must be >= 0");
  }

  // Sliding windows: every layer (llama = Mistral, phi3), even layers (gemma2), all but
  // every pattern-th (gemma3, <arch>.attention.sliding_window_pattern, default 6).
  ASSIGN_OR_RETURN(c.sliding_window, k.PositiveOr("attention.sliding_window", kMaxWidth, 0));
  if (c.sliding_window > 0 && (arch == "qwen2" || arch == "qwen3")) {
    return k.Error(StrCat("'", k.Name("attention.sliding_window"), "' is not supported for ", arch));
  }
  ASSIGN_OR_RETURN(int64_t pattern, k.PositiveOr("attention.sliding_window_pattern", kMaxLayers, 6));
  c.layer_window.assign(static_cast<size_t>(c.num_layers), 0);
  if (c.sliding_window > 0) {
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const bool slides = arch == "gemma2" ? i % 2 == 0 : gemma3 ? (i + 1) % pattern != 0 : true;
      if (slides) c.layer_window[static_cast<size_t>(i)] = c.sliding_window;
    }
  } else if (gemma3) {
    return k.Error(StrCat("'", k.Name("attention.sliding_window"), "' is missing (gemma3's local layers need it)"));
  }

  ASSIGN_OR_RETURN(const gguf::GgufTensor* embd, file.GetTensor("token_embd.weight"));
  if (embd->dims.size() != 2 || embd->dims[0] != c.hidden_size) {
    return k.Error(StrCat("tensor 'token_embd.weight' has dims [", StrJoin(embd->dims, ","), "]; expected [",
                          c.hidden_size, ", vocabulary]"));
  }
  c.vocab_size = embd->dims[1];
  c.tie_word_embeddings = file.FindTensor("output.weight") == nullptr;
  c.torch_dtype = "gguf";
  if (auto bos = md.GetInt("tokenizer.ggml.bos_token_id"); bos.ok()) c.bos_token_id = *bos;
  if (auto eos = md.GetInt("tokenizer.ggml.eos_token_id"); eos.ok()) c.eos_token_ids.push_back(*eos);
  return c;
}

}  // namespace infera::llm
