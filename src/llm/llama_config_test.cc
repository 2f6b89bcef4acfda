// LlamaConfig::Parse for each architecture's config fields (docs/llm.md, "Architectures"):
// the derived per-layer windows, rope bases, scales and flags, and the load errors that
// name an unimplemented field.
#include "llm/llama_config.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace infera::llm {
namespace {

std::string Config(const std::string& model_type, const std::string& extra = "") {
  return R"({"model_type": ")" + model_type +
         R"(", "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 6,
             "num_attention_heads": 4, "num_key_value_heads": 2)" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

TEST(LlamaConfigArchitectures, LlamaHasNoWindowAndStandardScale) {
  auto c = LlamaConfig::Parse(Config("llama"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->layer_window, std::vector<int64_t>(6, 0));
  EXPECT_FLOAT_EQ(c->AttentionScale(), 0.25f);  // 1 / sqrt(16)
  EXPECT_FALSE(c->gemma);
  EXPECT_FALSE(c->qk_norm);
}

TEST(LlamaConfigArchitectures, MistralAndPhi3SlideOnEveryLayer) {
  for (const char* type : {"mistral", "phi3"}) {
    auto c = LlamaConfig::Parse(Config(type, R"("sliding_window": 16)"));
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->layer_window, std::vector<int64_t>(6, 16)) << type;
  }
  auto null_window = LlamaConfig::Parse(Config("mistral", R"("sliding_window": null)"));
  ASSERT_TRUE(null_window.ok());
  EXPECT_EQ(null_window->sliding_window, 0);
  EXPECT_TRUE(LlamaConfig::Parse(Config("phi3"))->fused_weights);
}

TEST(LlamaConfigArchitectures, QwenSlidesFromMaxWindowLayersOnlyWhenEnabled) {
  auto off = LlamaConfig::Parse(Config("qwen3", R"("sliding_window": 8, "use_sliding_window": false)"));
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->layer_window, std::vector<int64_t>(6, 0));
  EXPECT_TRUE(off->qk_norm);
  auto on = LlamaConfig::Parse(
      Config("qwen2", R"("sliding_window": 8, "use_sliding_window": true, "max_window_layers": 4)"));
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(on->layer_window, (std::vector<int64_t>{0, 0, 0, 0, 8, 8}));
}

TEST(LlamaConfigArchitectures, Gemma2DefaultsAndAlternatingWindows) {
  auto c = LlamaConfig::Parse(Config("gemma2", R"("head_dim": 32, "sliding_window": 16)"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->gemma);
  EXPECT_TRUE(c->tie_word_embeddings);
  EXPECT_EQ(c->activation, MlpActivation::kGeluTanh);
  EXPECT_DOUBLE_EQ(c->attn_logit_softcapping, 50.0);
  EXPECT_DOUBLE_EQ(c->final_logit_softcapping, 30.0);
  EXPECT_DOUBLE_EQ(c->embedding_scale, 8.0);
  EXPECT_FLOAT_EQ(c->AttentionScale(), 1.0f / 16.0f);  // query_pre_attn_scalar 256
  EXPECT_EQ(c->layer_window, (std::vector<int64_t>{16, 0, 16, 0, 16, 0}));
  auto uncapped = LlamaConfig::Parse(Config("gemma2", R"("attn_logit_softcapping": null)"));
  ASSERT_TRUE(uncapped.ok());
  EXPECT_EQ(uncapped->attn_logit_softcapping, 0.0);
}

TEST(LlamaConfigArchitectures, Gemma3LocalGlobalLayersAndRopeBases) {
  auto c = LlamaConfig::Parse(Config("gemma3_text", R"("head_dim": 16, "sliding_window": 512,
      "sliding_window_pattern": 3, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
      "rope_scaling": {"rope_type": "linear", "factor": 8.0})"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->layer_window, (std::vector<int64_t>{512, 512, 0, 512, 512, 0}));
  EXPECT_TRUE(c->UsesLocalRope(0));
  EXPECT_FALSE(c->UsesLocalRope(2));
  EXPECT_EQ(c->attn_logit_softcapping, 0.0);
  const std::vector<float> global = c->RopeInverseFrequencies();
  const std::vector<float> local = c->RopeInverseFrequencies(/*local=*/true);
  EXPECT_FLOAT_EQ(global[0], 1.0f / 8.0f);  // linear scaling on the global rope only
  EXPECT_FLOAT_EQ(local[0], 1.0f);
  EXPECT_NEAR(local[1], std::pow(10000.0, -2.0 / 16), 1e-7);
  EXPECT_NEAR(global[1], std::pow(1e6, -2.0 / 16) / 8, 1e-9);
  auto typed = LlamaConfig::Parse(Config("gemma3_text", R"("sliding_window": 4, "layer_types": ["full_attention",
      "sliding_attention", "full_attention", "full_attention", "full_attention", "sliding_attention"])"));
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(typed->layer_window, (std::vector<int64_t>{0, 4, 0, 0, 0, 4}));
}

TEST(LlamaConfigArchitectures, Phi3LongRopeShortOrLongFactorsAndTheAttentionFactor) {
  auto c = LlamaConfig::Parse(Config("phi3", R"("max_position_embeddings": 131072,
      "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
      "rope_scaling": {"type": "longrope", "short_factor": [1, 2, 1, 1, 1, 1, 1, 4],
                       "long_factor": [5, 5, 5, 5, 5, 5, 5, 5]})"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rope_scaling.type, "longrope");
  EXPECT_EQ(c->rope_scaling.original_max_position_embeddings, 4096);
  EXPECT_NEAR(c->rope_scaling.attention_factor, std::sqrt(1 + std::log(32.0) / std::log(4096.0)), 1e-12);
  const std::vector<float> inv = c->RopeInverseFrequencies();
  EXPECT_FLOAT_EQ(inv[0], 1.0f);
  EXPECT_NEAR(inv[1], std::pow(10000.0, -2.0 / 16) / 2, 1e-7);
  EXPECT_NEAR(inv[7], std::pow(10000.0, -14.0 / 16) / 4, 1e-9);

  // A context past the original length: the long factors at every position, the same
  // attention factor. Up to it (or another rope type): the short ones stay.
  LlamaConfig up_to = *c;
  up_to.SelectLongRopeRegime(4096);
  EXPECT_FALSE(up_to.rope_scaling.use_long_factor);
  EXPECT_EQ(up_to.RopeInverseFrequencies(), inv);
  LlamaConfig past = *c;
  past.SelectLongRopeRegime(4097);
  EXPECT_TRUE(past.rope_scaling.use_long_factor);
  const std::vector<float> long_inv = past.RopeInverseFrequencies();
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(long_inv[i], std::pow(10000.0, -2.0 * i / 16) / 5, 1e-7) << i;
  }
  EXPECT_EQ(past.rope_scaling.attention_factor, c->rope_scaling.attention_factor);
  past.SelectLongRopeRegime(100);  // chosen again from the new length
  EXPECT_FALSE(past.rope_scaling.use_long_factor);
  auto llama = LlamaConfig::Parse(Config("llama", R"("max_position_embeddings": 64)"));
  ASSERT_TRUE(llama.ok()) << llama.status();
  llama->SelectLongRopeRegime(1 << 20);
  EXPECT_FALSE(llama->rope_scaling.use_long_factor);
}

// YaRN with head_dim 16, base 10000, factor 4 over an original 64 positions: the ramp's
// bounds are floor(16 ln(64 / (2π·32)) / (2 ln 10^4)) = floor(-0.99) → 0 and
// ceil(16 ln(64 / 2π) / (2 ln 10^4)) = ceil(2.02) = 3, so frequency i is kept (i = 0),
// blended 2/3 : 1/3 and 1/3 : 2/3 (i = 1, 2) or divided by 4 (i >= 3); cos/sin × 0.1 ln 4 + 1.
TEST(LlamaConfigArchitectures, YarnBlendsExtrapolatedAndInterpolatedFrequencies) {
  auto c = LlamaConfig::Parse(Config("qwen2", R"("max_position_embeddings": 64, "rope_theta": 10000.0,
      "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64})"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rope_scaling.type, "yarn");
  EXPECT_NEAR(c->rope_scaling.attention_factor, 0.1 * std::log(4.0) + 1, 1e-12);
  const std::vector<float> inv = c->RopeInverseFrequencies();
  ASSERT_EQ(inv.size(), 8u);
  auto plain = [](int i) { return std::pow(10000.0, -2.0 * i / 16); };
  EXPECT_NEAR(inv[0], 1.0, 1e-7);
  EXPECT_NEAR(inv[1], plain(1) * (2.0 / 3) + plain(1) / 4 * (1.0 / 3), 1e-6);
  EXPECT_NEAR(inv[2], plain(2) * (1.0 / 3) + plain(2) / 4 * (2.0 / 3), 1e-6);
  for (int i = 3; i < 8; ++i) EXPECT_NEAR(inv[i], plain(i) / 4, 1e-6 * plain(i)) << i;
  // mscale / mscale_all_dim (DeepSeek-style): the ratio; an explicit attention_factor wins.
  auto ds = LlamaConfig::Parse(Config("qwen2", R"("rope_scaling": {"rope_type": "yarn", "factor": 40,
      "mscale": 1.0, "mscale_all_dim": 0.5, "original_max_position_embeddings": 4096})"));
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_NEAR(ds->rope_scaling.attention_factor, (0.1 * std::log(40.0) + 1) / (0.05 * std::log(40.0) + 1), 1e-12);
  auto given = LlamaConfig::Parse(Config("qwen2", R"("rope_scaling": {"rope_type": "yarn", "factor": 2,
      "attention_factor": 1.5})"));
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_EQ(given->rope_scaling.attention_factor, 1.5);
  EXPECT_EQ(given->rope_scaling.original_max_position_embeddings, 2048);  // the config's own length
}

TEST(LlamaConfigArchitectures, UnimplementedFieldsAreErrorsNamingThem) {
  const std::pair<std::string, std::string> cases[] = {
      {Config("phi3", R"("rope_scaling": {"type": "longrope", "short_factor": [1], "long_factor": [2]})"),
       "rope_scaling.short_factor must be a list of head_dim / 2 = 8 numbers"},
      {Config("phi3", R"("rope_scaling": {"type": "su", "short_factor": [1,1,1,1,1,1,1,1],
                         "long_factor": [1,1,1,1,1,1,1,1]})"),
       "original_max_position_embeddings"},
      {Config("qwen3", R"("rope_scaling": {"rope_type": "dynamic", "factor": 4.0})"), "rope_scaling type \"dynamic\""},
      {Config("qwen2", R"("rope_scaling": {"rope_type": "yarn", "factor": 0.5})"), "yarn needs a \"factor\" >= 1"},
      {Config("qwen2", R"("rope_scaling": {"rope_type": "yarn", "factor": 4, "beta_fast": -1})"), "beta_fast"},
      {Config("phi3", R"("partial_rotary_factor": 0.5)"), "partial_rotary_factor"},
      {Config("llama", R"("mlp_bias": true)"), "mlp_bias"},
      {Config("llama", R"("quantization_config": {})"), "quantization_config"},
      {Config("gemma3_text", R"("use_bidirectional_attention": true)"), "use_bidirectional_attention"},
      {Config("gemma2", R"("hidden_activation": "gelu")"), "hidden_activation \"gelu\""},
      {Config("gemma3_text", R"("layer_types": ["full_attention"])"), "layer_types"},
      {Config("mistral", R"("sliding_window": -3)"), "sliding_window"},
      {Config("qwen2", R"("use_sliding_window": true, "max_window_layers": 2)"), "\"sliding_window\" is not set"},
      {Config("gemma2", R"("query_pre_attn_scalar": 0)"), "query_pre_attn_scalar"},
      {Config("falcon"), "model_type \"falcon\""},
      {R"({"vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1000000000000,
           "num_attention_heads": 4})", "\"num_hidden_layers\" 1000000000000 exceeds 4096"},
      {R"({"vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
           "num_attention_heads": 4, "head_dim": 1000000})", "\"head_dim\" 1000000 exceeds 4096"},
  };
  for (const auto& [text, message] : cases) {
    auto c = LlamaConfig::Parse(text);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_NE(c.status().message().find(message), std::string::npos) << c.status() << " / " << message;
  }
}

}  // namespace
}  // namespace infera::llm
