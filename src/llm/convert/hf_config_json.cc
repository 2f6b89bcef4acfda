#include "llm/convert/hf_config_json.h"

#include <cmath>

#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"

namespace infera::llm::convert {

std::string HfConfigJson(const LlamaConfig& c, WeightType dtype) {
  std::string model_type = c.model_type;
  if (model_type == "llama" && c.sliding_window > 0) model_type = "mistral";
  const char* architecture = model_type == "llama"         ? "LlamaForCausalLM"
                             : model_type == "mistral"     ? "MistralForCausalLM"
                             : model_type == "qwen2"       ? "Qwen2ForCausalLM"
                             : model_type == "qwen3"       ? "Qwen3ForCausalLM"
                             : model_type == "phi3"        ? "Phi3ForCausalLM"
                             : model_type == "gemma2"      ? "Gemma2ForCausalLM"
                                                           : "Gemma3ForCausalLM";
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto integer = [&](const char* k, int64_t v) {
    w.Key(k);
    w.Int64(v);
  };
  auto number = [&](const char* k, double v) {
    w.Key(k);
    w.Double(v);
  };
  auto nullable = [&](const char* k, double v) {
    w.Key(k);
    if (v > 0) w.Double(v);
    else w.Null();
  };
  w.StartObject();
  w.Key("architectures");
  w.StartArray();
  w.String(architecture);
  w.EndArray();
  w.Key("model_type");
  w.String(model_type.c_str());
  integer("vocab_size", c.vocab_size);
  integer("hidden_size", c.hidden_size);
  integer("intermediate_size", c.intermediate_size);
  integer("num_hidden_layers", c.num_layers);
  integer("num_attention_heads", c.num_heads);
  integer("num_key_value_heads", c.num_kv_heads);
  integer("head_dim", c.head_dim);
  number("rms_norm_eps", c.rms_norm_eps);
  number("rope_theta", c.rope_theta);
  integer("max_position_embeddings", c.max_position_embeddings);
  w.Key(c.gemma ? "hidden_activation" : "hidden_act");
  w.String(c.activation == MlpActivation::kGeluTanh ? "gelu_pytorch_tanh" : "silu");
  const RopeScaling& rs = c.rope_scaling;
  auto numbers = [&](const char* k, const std::vector<double>& v) {
    w.Key(k);
    w.StartArray();
    for (double x : v) w.Double(x);  // shortest round-trip form: exact
    w.EndArray();
  };
  w.Key("rope_scaling");
  if (rs.type == "linear") {
    w.StartObject();
    w.Key("rope_type");
    w.String("linear");
    number("factor", rs.factor);
    w.EndObject();
  } else if (rs.type == "longrope") {
    w.StartObject();
    w.Key("rope_type");
    w.String("longrope");
    numbers("short_factor", rs.frequency_divisors);
    numbers("long_factor", rs.long_factor);
    // Hugging Face derives it from the lengths; stated only where it differs.
    const double s = static_cast<double>(c.max_position_embeddings) /
                     static_cast<double>(rs.original_max_position_embeddings);
    const double derived = LongRopeAttentionFactor(s, static_cast<double>(rs.original_max_position_embeddings));
    if (std::abs(rs.attention_factor - derived) > 1e-6 * derived) number("attention_factor", rs.attention_factor);
    w.EndObject();
    integer("original_max_position_embeddings", rs.original_max_position_embeddings);
  } else if (rs.type == "yarn") {
    w.StartObject();
    w.Key("rope_type");
    w.String("yarn");
    number("factor", rs.factor);
    integer("original_max_position_embeddings", rs.original_max_position_embeddings);
    number("beta_fast", rs.beta_fast);
    number("beta_slow", rs.beta_slow);
    w.Key("truncate");
    w.Bool(rs.truncate);
    number("attention_factor", rs.attention_factor);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("sliding_window");
  if (c.sliding_window > 0) w.Int64(c.sliding_window);
  else w.Null();
  w.Key("layer_types");
  w.StartArray();
  for (int64_t i = 0; i < c.num_layers; ++i) w.String(c.WindowOf(i) > 0 ? "sliding_attention" : "full_attention");
  w.EndArray();
  if (c.gemma) {
    number("query_pre_attn_scalar", c.query_pre_attn_scalar);
    nullable("attn_logit_softcapping", c.attn_logit_softcapping);
    nullable("final_logit_softcapping", c.final_logit_softcapping);
  }
  if (c.rope_local_theta > 0) number("rope_local_base_freq", c.rope_local_theta);
  w.Key("tie_word_embeddings");
  w.Bool(c.tie_word_embeddings);
  w.Key("torch_dtype");
  w.String(dtype == WeightType::kF32 ? "float32" : dtype == WeightType::kF16 ? "float16" : "bfloat16");
  if (c.bos_token_id >= 0) integer("bos_token_id", c.bos_token_id);
  if (!c.eos_token_ids.empty()) integer("eos_token_id", c.eos_token_ids[0]);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace infera::llm::convert
