#include "llm/llama_config.h"

#include <cmath>

#include "common/status.h"
#include "common/str_cat.h"
#include "llm/text_imports.h"

namespace infera::llm {
namespace {

absl::Status Missing(std::string_view field) {
  return absl::InvalidArgumentError(StrCat("config.json: \"", field, "\" is missing or not an integer"));
}

absl::Status ParseRopeScaling(const rapidjson::Value& doc, LlamaConfig& config) {
  const rapidjson::Value* rs = FindMember(doc, "rope_scaling");
  if (!rs) return absl::OkStatus();
  std::string type = GetString(*rs, "rope_type").value_or(GetString(*rs, "type").value_or(""));
  if (type == "default" || type.empty()) return absl::OkStatus();
  if (type != "linear" && type != "llama3") {
    return absl::InvalidArgumentError(
        StrCat("config.json: rope_scaling type \"", type, "\" is not supported (linear, llama3)"));
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

}  // namespace

absl::StatusOr<LlamaConfig> LlamaConfig::Parse(std::string_view text) {
  rapidjson::Document doc;
  RETURN_IF_ERROR(ParseJson(text, "config.json", doc));
  LlamaConfig c;
  c.model_type = GetString(doc, "model_type").value_or("llama");
  if (c.model_type != "llama" && c.model_type != "mistral" && c.model_type != "qwen2") {
    return absl::InvalidArgumentError(StrCat("config.json: model_type \"", c.model_type,
                                             "\" is not supported (llama, mistral, qwen2)"));
  }
  if (auto act = GetString(doc, "hidden_act"); act && *act != "silu") {
    return absl::InvalidArgumentError(StrCat("config.json: hidden_act \"", *act, "\" is not supported (silu)"));
  }
  auto need = [&](std::string_view key, int64_t& out) -> absl::Status {
    auto v = GetInt(doc, key);
    if (!v || *v <= 0) return Missing(key);
    out = *v;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(need("vocab_size", c.vocab_size));
  RETURN_IF_ERROR(need("hidden_size", c.hidden_size));
  RETURN_IF_ERROR(need("intermediate_size", c.intermediate_size));
  RETURN_IF_ERROR(need("num_hidden_layers", c.num_layers));
  RETURN_IF_ERROR(need("num_attention_heads", c.num_heads));
  c.num_kv_heads = GetInt(doc, "num_key_value_heads").value_or(c.num_heads);
  c.head_dim = GetInt(doc, "head_dim").value_or(c.hidden_size / c.num_heads);
  if (c.num_kv_heads <= 0 || c.num_heads % c.num_kv_heads != 0) {
    return absl::InvalidArgumentError(StrCat("config.json: num_attention_heads ", c.num_heads,
                                             " is not a multiple of num_key_value_heads ", c.num_kv_heads));
  }
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) {
    return absl::InvalidArgumentError(StrCat("config.json: head_dim ", c.head_dim, " must be even and > 0"));
  }
  c.rms_norm_eps = GetDouble(doc, "rms_norm_eps").value_or(1e-6);
  c.rope_theta = GetDouble(doc, "rope_theta").value_or(10000.0);
  c.max_position_embeddings = GetInt(doc, "max_position_embeddings").value_or(2048);
  c.tie_word_embeddings = GetBool(doc, "tie_word_embeddings").value_or(false);
  c.torch_dtype = GetString(doc, "torch_dtype").value_or("float32");
  const bool use_sliding = GetBool(doc, "use_sliding_window").value_or(c.model_type == "mistral");
  if (use_sliding) c.sliding_window = GetInt(doc, "sliding_window").value_or(0);
  c.bos_token_id = GetInt(doc, "bos_token_id").value_or(-1);
  if (const rapidjson::Value* eos = FindMember(doc, "eos_token_id")) {
    if (eos->IsInt64()) c.eos_token_ids.push_back(eos->GetInt64());
    if (eos->IsArray()) {
      for (const auto& e : eos->GetArray()) {
        if (e.IsInt64()) c.eos_token_ids.push_back(e.GetInt64());
      }
    }
  }
  RETURN_IF_ERROR(ParseRopeScaling(doc, c));
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

std::vector<float> LlamaConfig::RopeInverseFrequencies() const {
  const int64_t half = head_dim / 2;
  std::vector<float> inv(half);
  for (int64_t i = 0; i < half; ++i) {
    // torch: 1.0 / (base ** (arange(0, dim, 2).float() / dim)), all in float32.
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    inv[i] = 1.0f / std::pow(static_cast<float>(rope_theta), exponent);
  }
  if (rope_scaling.type == "linear") {
    for (float& f : inv) f = static_cast<float>(f / rope_scaling.factor);
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
