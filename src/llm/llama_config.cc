#include "llm/llama_config.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/status.h"
#include "common/str_cat.h"
#include "llm/text_imports.h"

namespace infera::llm {
namespace {

absl::Status Missing(std::string_view field) {
  return absl::InvalidArgumentError(StrCat("config.json: \"", field, "\" is missing or not an integer"));
}

// rope_scaling.<key>: head_dim / 2 positive numbers.
absl::StatusOr<std::vector<double>> RopeFactors(const rapidjson::Value& rs, std::string_view key, int64_t half) {
  const rapidjson::Value* v = FindMember(rs, key);
  if (!v || !v->IsArray() || static_cast<int64_t>(v->Size()) != half) {
    return absl::InvalidArgumentError(
        StrCat("config.json: rope_scaling.", key, " must be a list of head_dim / 2 = ", half, " numbers"));
  }
  std::vector<double> out;
  for (const auto& f : v->GetArray()) {
    if (!f.IsNumber() || !(f.GetDouble() > 0)) {
      return absl::InvalidArgumentError(StrCat("config.json: rope_scaling.", key, " holds a non-positive value"));
    }
    out.push_back(f.GetDouble());
  }
  return out;
}

// Phi-3's longrope ("su" in older configs): per-frequency divisors, short_factor up to
// original_max_position_embeddings and long_factor beyond, and cos/sin scaled by an
// attention factor. Hugging Face picks the factor set from the current sequence length
// and never re-rotates cached keys, so sequences past the original length have no single
// well-defined rotation; the engine picks one set per model at load
// (LlamaConfig::SelectLongRopeRegime).
absl::Status ParseLongRope(const rapidjson::Value& doc, const rapidjson::Value& rs, LlamaConfig& config) {
  RopeScaling& s = config.rope_scaling;
  s.type = "longrope";
  const int64_t half = config.head_dim / 2;
  ASSIGN_OR_RETURN(s.frequency_divisors, RopeFactors(rs, "short_factor", half));
  ASSIGN_OR_RETURN(s.long_factor, RopeFactors(rs, "long_factor", half));
  std::optional<int64_t> original = GetInt(doc, "original_max_position_embeddings");
  if (!original) original = GetInt(rs, "original_max_position_embeddings");
  if (!original || *original <= 0) {
    return absl::InvalidArgumentError(
        "config.json: longrope needs a positive \"original_max_position_embeddings\"");
  }
  s.original_max_position_embeddings = *original;
  const double factor = static_cast<double>(config.max_position_embeddings) / static_cast<double>(*original);
  s.factor = factor;
  if (auto a = GetDouble(rs, "attention_factor")) {
    s.attention_factor = *a;
  } else {
    s.attention_factor = LongRopeAttentionFactor(factor, static_cast<double>(*original));
  }
  return absl::OkStatus();
}

// YaRN (Qwen2.5 / Qwen3 past 32 k, as their model cards add it): each frequency a blend
// of itself (extrapolated) and itself / factor (interpolated) by a linear ramp over the
// dimensions between beta_fast and beta_slow rotations within the original length;
// cos/sin × the attention factor (given, or 0.1 · mscale · ln factor + 1, over the same
// with mscale_all_dim when both are given). `factor` is the config's, as vLLM and
// llama.cpp read it (docs/llm.md, "YaRN").
absl::Status ParseYarn(const rapidjson::Value& rs, LlamaConfig& config) {
  RopeScaling& s = config.rope_scaling;
  s.type = "yarn";
  const std::optional<double> factor = GetDouble(rs, "factor");
  if (!factor || !std::isfinite(*factor) || *factor < 1.0) {
    return absl::InvalidArgumentError("config.json: rope_scaling yarn needs a \"factor\" >= 1");
  }
  s.factor = *factor;
  s.original_max_position_embeddings =
      GetInt(rs, "original_max_position_embeddings").value_or(config.max_position_embeddings);
  s.beta_fast = GetDouble(rs, "beta_fast").value_or(32.0);
  s.beta_slow = GetDouble(rs, "beta_slow").value_or(1.0);
  s.truncate = GetBool(rs, "truncate").value_or(true);
  if (s.original_max_position_embeddings <= 0 || !std::isfinite(s.beta_fast) || !(s.beta_fast > 0) ||
      !std::isfinite(s.beta_slow) || !(s.beta_slow > 0)) {
    return absl::InvalidArgumentError(
        "config.json: rope_scaling yarn needs a positive original_max_position_embeddings, beta_fast and beta_slow");
  }
  const std::optional<double> mscale = GetDouble(rs, "mscale");
  const std::optional<double> mscale_all_dim = GetDouble(rs, "mscale_all_dim");
  if (auto a = GetDouble(rs, "attention_factor")) {
    s.attention_factor = *a;
  } else if (mscale && *mscale != 0 && mscale_all_dim && *mscale_all_dim != 0) {
    s.attention_factor = YarnAttentionFactor(s.factor, *mscale) / YarnAttentionFactor(s.factor, *mscale_all_dim);
  } else {
    s.attention_factor = YarnAttentionFactor(s.factor);
  }
  if (!std::isfinite(s.attention_factor) || !(s.attention_factor > 0)) {
    return absl::InvalidArgumentError(
        StrCat("config.json: rope_scaling yarn's attention factor is ", s.attention_factor, " (must be > 0)"));
  }
  return absl::OkStatus();
}

absl::Status ParseRopeScaling(const rapidjson::Value& doc, LlamaConfig& config) {
  const rapidjson::Value* rs = FindMember(doc, "rope_scaling");
  if (!rs) return absl::OkStatus();
  std::string type = GetString(*rs, "rope_type").value_or(GetString(*rs, "type").value_or(""));
  if (type == "default" || type.empty()) return absl::OkStatus();
  if (type == "longrope" || type == "su") return ParseLongRope(doc, *rs, config);
  if (type == "yarn") return ParseYarn(*rs, config);
  if (type != "linear" && type != "llama3") {
    return absl::InvalidArgumentError(
        StrCat("config.json: rope_scaling type \"", type, "\" is not supported (linear, llama3, longrope, yarn)"));
  }
  RopeScaling& s = config.rope_scaling;
  s.type = type;
  s.factor = GetDouble(*rs, "factor").value_or(1.0);
  s.low_freq_factor = GetDouble(*rs, "low_freq_factor").value_or(1.0);
  s.high_freq_factor = GetDouble(*rs, "high_freq_factor").value_or(4.0);
  s.original_max_position_embeddings =
      GetInt(*rs, "original_max_position_embeddings").value_or(8192);
  return absl::OkStatus();
}


// The member `key` including an explicit null (FindMember treats null as absent, but for
// these fields null means "off", unlike absent, which means the class default).
const rapidjson::Value* RawMember(const rapidjson::Value& doc, std::string_view key) {
  if (!doc.IsObject()) return nullptr;
  auto it = doc.FindMember(rapidjson::Value(rapidjson::StringRef(key.data(), key.size())));
  return it == doc.MemberEnd() ? nullptr : &it->value;
}

// A float field that Hugging Face lets be null (= off): `fallback` when absent.
absl::StatusOr<double> NullableDouble(const rapidjson::Value& doc, std::string_view key, double fallback) {
  const rapidjson::Value* v = RawMember(doc, key);
  if (!v) return fallback;
  if (v->IsNull()) return 0.0;
  if (!v->IsNumber() || v->GetDouble() < 0) {
    return absl::InvalidArgumentError(StrCat("config.json: \"", key, "\" must be a non-negative number or null"));
  }
  return v->GetDouble();
}

// Fields whose meaning the engine does not implement: a load error naming each rather
// than a model that silently computes something else.
absl::Status ParseUnsupported(const rapidjson::Value& doc) {
  if (auto f = GetDouble(doc, "partial_rotary_factor"); f && *f != 1.0) {
    return absl::InvalidArgumentError(
        StrCat("config.json: partial_rotary_factor ", *f, " is not supported (rotary over the whole head only)"));
  }
  if (GetBool(doc, "mlp_bias").value_or(false)) {
    return absl::InvalidArgumentError("config.json: mlp_bias true is not supported");
  }
  if (GetBool(doc, "use_bidirectional_attention").value_or(false)) {
    return absl::InvalidArgumentError("config.json: use_bidirectional_attention true is not supported (causal only)");
  }
  if (FindMember(doc, "quantization_config")) {
    return absl::InvalidArgumentError(
        "config.json: quantization_config (an already-quantised checkpoint) is not supported; load the "
        "unquantised weights and set the `quantization` parameter");
  }
  return absl::OkStatus();
}

// Gemma-2 / Gemma-3: scaled embeddings, query_pre_attn_scalar, soft-capping, local rope.
// Defaults are Hugging Face's Gemma2Config / Gemma3TextConfig defaults.
absl::Status ParseGemma(const rapidjson::Value& doc, LlamaConfig& c) {
  const bool gemma2 = c.model_type == "gemma2";
  ASSIGN_OR_RETURN(c.attn_logit_softcapping, NullableDouble(doc, "attn_logit_softcapping", gemma2 ? 50.0 : 0.0));
  ASSIGN_OR_RETURN(c.final_logit_softcapping,
                   NullableDouble(doc, "final_logit_softcapping", gemma2 ? 30.0 : 0.0));
  if (!c.gemma) return absl::OkStatus();
  c.embedding_scale = std::sqrt(static_cast<double>(c.hidden_size));
  ASSIGN_OR_RETURN(c.query_pre_attn_scalar, NullableDouble(doc, "query_pre_attn_scalar", 256.0));
  if (c.query_pre_attn_scalar <= 0) {
    return absl::InvalidArgumentError("config.json: query_pre_attn_scalar must be > 0");
  }
  if (c.model_type == "gemma3_text") {
    c.rope_local_theta = GetDouble(doc, "rope_local_base_freq").value_or(10000.0);
    if (c.rope_local_theta <= 0) return absl::InvalidArgumentError("config.json: rope_local_base_freq must be > 0");
  }
  return absl::OkStatus();
}

// Which layers slide, and over how many tokens: `layer_types` when given, else each
// family's rule (Hugging Face's modeling code for that architecture).
absl::Status ParseLayerWindows(const rapidjson::Value& doc, LlamaConfig& c) {
  const std::string& type = c.model_type;
  const rapidjson::Value* sw = RawMember(doc, "sliding_window");
  int64_t window = 0;
  if (sw && !sw->IsNull()) {
    if (!sw->IsInt64() || sw->GetInt64() <= 0) {
      return absl::InvalidArgumentError("config.json: \"sliding_window\" must be a positive integer or null");
    }
    window = sw->GetInt64();
  } else if (!sw && c.gemma) {
    window = 4096;  // Gemma2Config / Gemma3TextConfig default
  }
  c.layer_window.assign(static_cast<size_t>(c.num_layers), 0);
  std::vector<bool> sliding(static_cast<size_t>(c.num_layers), false);
  // Whether the config asks for sliding layers explicitly (then a missing window is an
  // error) or only by the family's default (then a null window means none, as in HF).
  bool explicit_request = false;
  if (const rapidjson::Value* types = FindMember(doc, "layer_types"); types && !types->IsNull()) {
    if (!types->IsArray() || static_cast<int64_t>(types->Size()) != c.num_layers) {
      return absl::InvalidArgumentError(
          StrCat("config.json: \"layer_types\" must list one type for each of the ", c.num_layers, " layers"));
    }
    for (rapidjson::SizeType i = 0; i < types->Size(); ++i) {
      const rapidjson::Value& t = (*types)[i];
      const std::string name = t.IsString() ? std::string(t.GetString(), t.GetStringLength()) : "";
      if (name == "sliding_attention") {
        sliding[i] = true;
        explicit_request = true;
      } else if (name != "full_attention") {
        return absl::InvalidArgumentError(StrCat("config.json: layer_types[", i, "] \"", name,
                                                 "\" is not supported (full_attention, sliding_attention)"));
      }
    }
  } else {
    const bool qwen = type == "qwen2" || type == "qwen3";
    const std::optional<bool> requested = GetBool(doc, "use_sliding_window");
    explicit_request = requested.value_or(false);
    const bool use = requested.value_or(type == "mistral" || type == "phi3" || c.gemma) && (explicit_request || window > 0);
    const int64_t max_window_layers = GetInt(doc, "max_window_layers").value_or(qwen ? c.num_layers : 0);
    const int64_t pattern = GetInt(doc, "sliding_window_pattern").value_or(6);
    if (type == "gemma3_text" && pattern <= 0) {
      return absl::InvalidArgumentError("config.json: sliding_window_pattern must be > 0");
    }
    for (int64_t i = 0; i < c.num_layers; ++i) {
      if (!use || type == "llama") continue;
      if (qwen) sliding[i] = i >= max_window_layers;  // Qwen2/3: the layers from max_window_layers on
      else if (type == "gemma2") sliding[i] = i % 2 == 0;  // even layers local, odd global
      else if (type == "gemma3_text") sliding[i] = (i + 1) % pattern != 0;  // every pattern-th global
      else sliding[i] = true;  // Mistral, Phi-3: every layer
    }
  }
  bool any = false;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    if (!sliding[i]) continue;
    if (window <= 0) {
      return absl::InvalidArgumentError(StrCat("config.json: layer ", i, " slides but \"sliding_window\" is not set"));
    }
    c.layer_window[i] = window;
    any = true;
  }
  c.sliding_window = any ? window : 0;
  return absl::OkStatus();
}

}  // namespace

double YarnAttentionFactor(double factor, double mscale) {
  return factor <= 1.0 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
}

double LongRopeAttentionFactor(double factor, double original_length) {
  return factor <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(factor) / std::log(original_length));
}

absl::StatusOr<LlamaConfig> LlamaConfig::Parse(std::string_view text) {
  rapidjson::Document doc;
  RETURN_IF_ERROR(ParseJson(text, "config.json", doc));
  LlamaConfig c;
  c.model_type = GetString(doc, "model_type").value_or("llama");
  const std::string& type = c.model_type;
  const bool known = type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3" ||
                     type == "phi3" || type == "gemma2" || type == "gemma3_text";
  if (!known) {
    return absl::InvalidArgumentError(
        StrCat("config.json: model_type \"", type,
               "\" is not supported (llama, mistral, qwen2, qwen3, phi3, gemma2, gemma3_text)"));
  }
  c.gemma = type == "gemma2" || type == "gemma3_text";
  c.qk_norm = type == "qwen3" || type == "gemma3_text";
  c.fused_weights = type == "phi3";
  // Gemma names the MLP activation `hidden_activation` (its `hidden_act` is legacy).
  std::optional<std::string> act = c.gemma ? GetString(doc, "hidden_activation") : std::nullopt;
  const char* act_field = act ? "hidden_activation" : "hidden_act";
  if (!act) act = GetString(doc, "hidden_act");
  const std::string activation = act.value_or(c.gemma ? "gelu_pytorch_tanh" : "silu");
  if (activation == "silu" || activation == "swish") {
    c.activation = MlpActivation::kSilu;
  } else if (activation == "gelu_pytorch_tanh" || activation == "gelu_new") {
    c.activation = MlpActivation::kGeluTanh;
  } else {
    return absl::InvalidArgumentError(StrCat("config.json: ", act_field, " \"", activation,
                                             "\" is not supported (silu, gelu_pytorch_tanh)"));
  }
  // Bounds far above any published model keep every product of two sizes (weight
  // shapes, per-layer tables) well inside int64 for a hostile config.json.
  auto bounded = [&](std::string_view key, int64_t value, int64_t limit) -> absl::Status {
    if (value > limit) {
      return absl::InvalidArgumentError(StrCat("config.json: \"", key, "\" ", value, " exceeds ", limit));
    }
    return absl::OkStatus();
  };
  auto need = [&](std::string_view key, int64_t& out, int64_t limit) -> absl::Status {
    auto v = GetInt(doc, key);
    if (!v || *v <= 0) return Missing(key);
    out = *v;
    return bounded(key, out, limit);
  };
  constexpr int64_t kMaxWidth = int64_t{1} << 24, kMaxCount = 4096;
  RETURN_IF_ERROR(need("vocab_size", c.vocab_size, kMaxWidth));
  RETURN_IF_ERROR(need("hidden_size", c.hidden_size, kMaxWidth));
  RETURN_IF_ERROR(need("intermediate_size", c.intermediate_size, kMaxWidth));
  RETURN_IF_ERROR(need("num_hidden_layers", c.num_layers, kMaxCount));
  RETURN_IF_ERROR(need("num_attention_heads", c.num_heads, kMaxCount));
  c.num_kv_heads = GetInt(doc, "num_key_value_heads").value_or(c.num_heads);
  c.head_dim = GetInt(doc, "head_dim").value_or(c.hidden_size / c.num_heads);
  RETURN_IF_ERROR(bounded("head_dim", c.head_dim, kMaxCount));
  if (c.num_kv_heads <= 0 || c.num_heads % c.num_kv_heads != 0) {
    return absl::InvalidArgumentError(StrCat("config.json: num_attention_heads ", c.num_heads,
                                             " is not a multiple of num_key_value_heads ", c.num_kv_heads));
  }
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) {
    return absl::InvalidArgumentError(StrCat("config.json: head_dim ", c.head_dim, " must be even and > 0"));
  }
  c.rms_norm_eps = GetDouble(doc, "rms_norm_eps").value_or(1e-6);
  c.rope_theta = GetDouble(doc, "rope_theta").value_or(type == "gemma3_text" ? 1000000.0 : 10000.0);
  c.max_position_embeddings = GetInt(doc, "max_position_embeddings").value_or(2048);
  c.tie_word_embeddings = GetBool(doc, "tie_word_embeddings").value_or(c.gemma);
  c.torch_dtype = GetString(doc, "torch_dtype").value_or("float32");
  c.bos_token_id = GetInt(doc, "bos_token_id").value_or(-1);
  if (const rapidjson::Value* eos = FindMember(doc, "eos_token_id")) {
    if (eos->IsInt64()) c.eos_token_ids.push_back(eos->GetInt64());
    if (eos->IsArray()) {
      for (const auto& e : eos->GetArray()) {
        if (e.IsInt64()) c.eos_token_ids.push_back(e.GetInt64());
      }
    }
  }
  RETURN_IF_ERROR(ParseUnsupported(doc));
  RETURN_IF_ERROR(ParseRopeScaling(doc, c));
  RETURN_IF_ERROR(ParseGemma(doc, c));
  RETURN_IF_ERROR(ParseLayerWindows(doc, c));
  return c;
}

absl::StatusOr<LlamaConfig> LlamaConfig::Load(const std::filesystem::path& config_json) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(config_json));
  absl::StatusOr<LlamaConfig> config = Parse(text);
  if (!config.ok()) {
    return absl::InvalidArgumentError(StrCat(config_json.string(), ": ", config.status().message()));
  }
  return config;
}

float LlamaConfig::AttentionScale() const {
  const double d = query_pre_attn_scalar > 0 ? query_pre_attn_scalar : static_cast<double>(head_dim);
  return 1.0f / std::sqrt(static_cast<float>(d));
}

void LlamaConfig::SelectLongRopeRegime(int64_t max_model_len) {
  rope_scaling.use_long_factor = rope_scaling.type == "longrope" &&
                                 max_model_len > rope_scaling.original_max_position_embeddings &&
                                 static_cast<int64_t>(rope_scaling.long_factor.size()) == head_dim / 2;
}

std::vector<float> LlamaConfig::RopeInverseFrequencies(bool local) const {
  const int64_t half = head_dim / 2;
  std::vector<float> inv(half);
  const double base = local ? rope_local_theta : rope_theta;
  const std::vector<double>& divisors =
      rope_scaling.use_long_factor ? rope_scaling.long_factor : rope_scaling.frequency_divisors;
  const bool divide = !local && static_cast<int64_t>(divisors.size()) == half;
  for (int64_t i = 0; i < half; ++i) {
    // torch: 1.0 / (base ** (arange(0, dim, 2).float() / dim)), all in float32; with
    // per-frequency divisors (Phi-3's longrope: 1.0 / (ext_factors * base ** ...)) the
    // divisor multiplies the power in float32 before the reciprocal.
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    const float power = std::pow(static_cast<float>(base), exponent);
    inv[i] = divide ? 1.0f / (static_cast<float>(divisors[i]) * power) : 1.0f / power;
  }
  if (local) return inv;  // Gemma-3's local rope is never scaled
  if (rope_scaling.type == "linear") {
    for (float& f : inv) f = static_cast<float>(f / rope_scaling.factor);
  } else if (rope_scaling.type == "yarn") {
    // Hugging Face's _compute_yarn_parameters: the ramp's bounds from the rotations a
    // dimension makes over the original length (in units of the head's dimensions, then
    // applied to the half's indices, as there), in double; the blend in float32.
    const double d = static_cast<double>(head_dim);
    auto correction_dim = [&](double rotations) {
      return d * std::log(static_cast<double>(rope_scaling.original_max_position_embeddings) /
                          (rotations * 2 * M_PI)) /
             (2 * std::log(base));
    };
    double low = correction_dim(rope_scaling.beta_fast), high = correction_dim(rope_scaling.beta_slow);
    if (rope_scaling.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, d - 1);
    if (low == high) high += 0.001;  // as there: no division by zero
    for (int64_t i = 0; i < half; ++i) {
      const float ramp = std::clamp((static_cast<float>(i) - static_cast<float>(low)) / static_cast<float>(high - low),
                                    0.0f, 1.0f);
      const float extrapolation = 1.0f - ramp;
      const float power = std::pow(static_cast<float>(base), static_cast<float>(2 * i) / static_cast<float>(head_dim));
      const float interpolated = 1.0f / (static_cast<float>(rope_scaling.factor) * power);
      inv[i] = interpolated * (1.0f - extrapolation) + inv[i] * extrapolation;
    }
  } else if (rope_scaling.type == "llama3") {
    const double old_len = static_cast<double>(rope_scaling.original_max_position_embeddings);
    const double low_wavelen = old_len / rope_scaling.low_freq_factor;
    const double high_wavelen = old_len / rope_scaling.high_freq_factor;
    for (float& f : inv) {
      const double wavelen = 2 * M_PI / f;
      if (wavelen > low_wavelen) {
        f = static_cast<float>(f / rope_scaling.factor);
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_len / wavelen - rope_scaling.low_freq_factor) /
                              (rope_scaling.high_freq_factor - rope_scaling.low_freq_factor);
        f = static_cast<float>((1 - smooth) * f / rope_scaling.factor + smooth * f);
      }
    }
  }
  return inv;
}

}  // namespace infera::llm
