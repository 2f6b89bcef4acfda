#include "llm/gguf_llama_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "gguf/test_gguf_builder.h"

namespace infera::llm {
namespace {

using ::testing::HasSubstr;
using gguf::testing::GgufBuilder;

// A gemma3-shaped file's metadata with a token_embd of `vocab` rows of 256 (F32).
GgufBuilder Gemma3(uint32_t vocab = 8) {
  GgufBuilder b;
  b.Str("general.architecture", "gemma3")
      .U32("gemma3.block_count", 6)
      .U32("gemma3.embedding_length", 256)
      .U32("gemma3.feed_forward_length", 512)
      .U32("gemma3.attention.head_count", 4)
      .U32("gemma3.attention.head_count_kv", 2)
      .U32("gemma3.attention.key_length", 64)
      .U32("gemma3.attention.value_length", 64)
      .F32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f)
      .F32("gemma3.rope.freq_base", 1e6f)
      .U32("gemma3.attention.sliding_window", 16)
      .Str("gemma3.rope.scaling.type", "linear")
      .F32("gemma3.rope.scaling.factor", 8.0f)
      .U32("gemma3.context_length", 1024)
      .Tensor("token_embd.weight", 0, {256, vocab}, 256ull * vocab * 4);
  return b;
}

absl::StatusOr<LlamaConfig> Parse(const GgufBuilder& b, std::string* bytes) {
  *bytes = b.Build();
  auto file = gguf::GgufFile::FromBytes(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(), "t.gguf");
  if (!file.ok()) return file.status();
  return LlamaConfigFromGguf(**file);
}

TEST(GgufLlamaConfigTest, Gemma3) {
  std::string bytes;
  auto c = Parse(Gemma3(), &bytes);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model_type, "gemma3_text");
  EXPECT_EQ(c->num_layers, 6);
  EXPECT_EQ(c->head_dim, 64);
  EXPECT_EQ(c->vocab_size, 8);
  EXPECT_TRUE(c->gemma && c->qk_norm && c->tie_word_embeddings);
  EXPECT_EQ(c->rope_scaling.type, "linear");
  EXPECT_EQ(c->rope_scaling.factor, 8.0);
  EXPECT_EQ(c->rope_local_theta, 10000.0);
  EXPECT_EQ(c->query_pre_attn_scalar, 64.0);
  EXPECT_EQ(c->max_position_embeddings, 1024);
  // every 6th layer global (pattern default 6)
  EXPECT_EQ(c->layer_window, (std::vector<int64_t>{16, 16, 16, 16, 16, 0}));
}

TEST(GgufLlamaConfigTest, RefusedKeysAreNamed) {
  struct Case {
    GgufBuilder builder;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({Gemma3().U32("gemma3.rope.dimension_count", 32), "partial rotary"});
  cases.push_back({GgufBuilder(Gemma3()).Str("unused", "x"), ""});
  {
    GgufBuilder b;
    b.Str("general.architecture", "falcon");
    cases.push_back({b, "general.architecture 'falcon' is not supported"});
  }
  {
    GgufBuilder b;
    b.Str("general.architecture", "llama").U32("llama.block_count", 0);
    cases.push_back({b, "'llama.block_count' is 0"});
  }
  {
    GgufBuilder b;
    b.Str("general.architecture", "qwen2").U32("qwen2.block_count", 2);
    cases.push_back({b, "qwen2.embedding_length"});
  }
  for (const Case& c : cases) {
    std::string bytes;
    auto config = Parse(c.builder, &bytes);
    if (c.message.empty()) {
      EXPECT_TRUE(config.ok()) << config.status();
    } else {
      ASSERT_FALSE(config.ok()) << c.message;
      EXPECT_THAT(config.status().message(), HasSubstr(c.message));
    }
  }
}

// A llama file's metadata: 2 layers, 4 heads of 16 (8 rotary frequencies), context 256.
GgufBuilder Llama(const std::string& arch = "llama") {
  GgufBuilder b;
  b.Str("general.architecture", arch)
      .U32(arch + ".block_count", 2)
      .U32(arch + ".embedding_length", 64)
      .U32(arch + ".feed_forward_length", 128)
      .U32(arch + ".attention.head_count", 4)
      .U32(arch + ".attention.head_count_kv", 2)
      .F32(arch + ".rope.freq_base", 10000.0f)
      .U32(arch + ".context_length", 256)
      .Tensor("token_embd.weight", 0, {64, 8}, 64 * 8 * 4);
  return b;
}

constexpr uint32_t kF32 = 0, kF16 = 1, kI32 = 26, kBF16 = 30;

std::string FloatBytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

const std::vector<float> kDivisors = {1, 1, 1.5f, 2, 4, 8, 8, 8};

TEST(GgufLlamaConfigTest, RopeFreqsDivideEachFrequency) {
  std::string bytes;
  auto c = Parse(Llama().TensorData("rope_freqs.weight", kF32, {8}, FloatBytes(kDivisors)), &bytes);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rope_scaling.type, "");
  ASSERT_EQ(c->rope_scaling.frequency_divisors, std::vector<double>(kDivisors.begin(), kDivisors.end()));
  const std::vector<float> inv = c->RopeInverseFrequencies();
  ASSERT_EQ(inv.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    // base^(-2i/d) / factor[i] (llama.cpp's rope_freqs), to float rounding
    const double want = std::pow(10000.0, -2.0 * static_cast<double>(i) / 16.0) / kDivisors[i];
    EXPECT_NEAR(inv[i], want, 1e-6 * want) << i;
  }
  // F16 factors (exact in half precision here) give the same divisors
  std::string halves;
  for (float f : kDivisors) {
    const uint16_t h = f == 1 ? 0x3C00 : f == 1.5f ? 0x3E00 : f == 2 ? 0x4000 : f == 4 ? 0x4400 : 0x4800;
    halves.append(reinterpret_cast<const char*>(&h), 2);
  }
  auto half = Parse(Llama().TensorData("rope_freqs.weight", kF16, {8}, halves), &bytes);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->rope_scaling.frequency_divisors, c->rope_scaling.frequency_divisors);
  // and with linear scaling the factor divides after them (llama.cpp: freq_scale too)
  auto linear = Parse(Llama()
                          .Str("llama.rope.scaling.type", "linear")
                          .F32("llama.rope.scaling.factor", 2.0f)
                          .TensorData("rope_freqs.weight", kF32, {8}, FloatBytes(kDivisors)),
                      &bytes);
  ASSERT_TRUE(linear.ok()) << linear.status();
  const std::vector<float> inv2 = linear->RopeInverseFrequencies();
  for (size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(inv2[i], inv[i] / 2) << i;
}

// YaRN from GGUF keys (llama.cpp's): the same frequencies and attention factor as the
// config.json form with the same factor and original length (Hugging Face's defaults
// beta_fast 32, beta_slow 1, truncate); attn_factor multiplies the derived 0.1 ln f + 1.
TEST(GgufLlamaConfigTest, YarnKeysComputeWhatConfigJsonYarnDoes) {
  std::string bytes;
  auto c = Parse(Llama("qwen2")
                     .Str("qwen2.rope.scaling.type", "yarn")
                     .F32("qwen2.rope.scaling.factor", 4.0f)
                     .U32("qwen2.rope.scaling.original_context_length", 64),
                 &bytes);
  ASSERT_TRUE(c.ok()) << c.status();
  auto json = LlamaConfig::Parse(R"({"model_type": "qwen2", "vocab_size": 8, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "max_position_embeddings": 256, "rope_theta": 10000.0,
      "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}})");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(c->rope_scaling.type, "yarn");
  EXPECT_EQ(c->rope_scaling.original_max_position_embeddings, 64);
  EXPECT_EQ(c->RopeInverseFrequencies(), json->RopeInverseFrequencies());
  EXPECT_DOUBLE_EQ(c->rope_scaling.attention_factor, json->rope_scaling.attention_factor);
  LlamaConfig plain = *c;
  plain.rope_scaling = RopeScaling();
  EXPECT_NE(c->RopeInverseFrequencies(), plain.RopeInverseFrequencies());  // the scaling is in effect
  // The original length defaults to context_length; attn_factor multiplies.
  auto scaled = Parse(Llama("qwen2")
                          .Str("qwen2.rope.scaling.type", "yarn")
                          .F32("qwen2.rope.scaling.factor", 2.0f)
                          .F32("qwen2.rope.scaling.attn_factor", 0.5f),
                      &bytes);
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_EQ(scaled->rope_scaling.original_max_position_embeddings, 256);
  EXPECT_NEAR(scaled->rope_scaling.attention_factor, 0.5 * (0.1 * std::log(2.0) + 1), 1e-7);
  // Refused, naming the key.
  const std::pair<GgufBuilder, std::string> refused[] = {
      {Llama("qwen2").Str("qwen2.rope.scaling.type", "yarn"),
       "'qwen2.rope.scaling.type' yarn needs 'qwen2.rope.scaling.factor'"},
      {Llama("qwen2").Str("qwen2.rope.scaling.type", "yarn").F32("qwen2.rope.scaling.factor", 0.5f),
       "'qwen2.rope.scaling.factor' 0.5 must be finite and >= 1 for yarn"},
      {Llama("qwen2")
           .Str("qwen2.rope.scaling.type", "yarn")
           .F32("qwen2.rope.scaling.factor", 2.0f)
           .F32("qwen2.rope.scaling.yarn_log_multiplier", 0.1f),
       "'qwen2.rope.scaling.yarn_log_multiplier' is not supported"},
      {Llama("qwen2")
           .Str("qwen2.rope.scaling.type", "yarn")
           .F32("qwen2.rope.scaling.factor", 2.0f)
           .F32("qwen2.rope.scaling.attn_factor", -1.0f),
       "attention factor of"},
      {Llama("qwen2")
           .Str("qwen2.rope.scaling.type", "yarn")
           .F32("qwen2.rope.scaling.factor", 2.0f)
           .TensorData("rope_freqs.weight", kF32, {8}, FloatBytes(kDivisors)),
       "tensor 'rope_freqs.weight' cannot be combined with 'qwen2.rope.scaling.type' yarn"},
      {Llama("qwen2").Str("qwen2.rope.scaling.type", "dynamic"), "'dynamic' is not supported (none, linear, yarn)"},
  };
  for (const auto& [builder, message] : refused) {
    auto r = Parse(builder, &bytes);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_THAT(r.status().message(), HasSubstr(message));
  }
}

TEST(GgufLlamaConfigTest, Gemma3LocalRopeIgnoresRopeFreqs) {
  std::string bytes;
  std::vector<float> factors(32, 1.0f);
  factors[31] = 8.0f;
  auto c = Parse(Gemma3().TensorData("rope_freqs.weight", kF32, {32}, FloatBytes(factors)), &bytes);
  ASSERT_TRUE(c.ok()) << c.status();
  const std::vector<float> local = c->RopeInverseFrequencies(/*local=*/true);
  const std::vector<float> global = c->RopeInverseFrequencies();
  EXPECT_FLOAT_EQ(local[31], 1.0f / std::pow(10000.0f, 62.0f / 64.0f));
  EXPECT_FLOAT_EQ(global[31], 1.0f / (8.0f * std::pow(1e6f, 62.0f / 64.0f)) / 8.0f);  // rope_freqs, then linear 8
  EXPECT_FLOAT_EQ(global[0], 1.0f / 8.0f);
}

TEST(GgufLlamaConfigTest, Phi3RopeFactorsAreLongrope) {
  std::string bytes;
  std::vector<float> long_factors(8, 3.0f);
  auto b = [&] {
    return Llama("phi3")
        .TensorData("rope_factors_short.weight", kF32, {8}, FloatBytes(kDivisors))
        .TensorData("rope_factors_long.weight", kF32, {8}, FloatBytes(long_factors));
  };
  auto c = Parse(b().U32("phi3.rope.scaling.original_context_length", 64), &bytes);
  ASSERT_TRUE(c.ok()) << c.status();
  const RopeScaling& s = c->rope_scaling;
  EXPECT_EQ(s.type, "longrope");
  EXPECT_EQ(s.original_max_position_embeddings, 64);
  EXPECT_EQ(s.frequency_divisors, std::vector<double>(kDivisors.begin(), kDivisors.end()));
  EXPECT_EQ(s.long_factor, std::vector<double>(8, 3.0));
  EXPECT_NEAR(s.attention_factor, std::sqrt(1 + std::log(4.0) / std::log(64.0)), 1e-12);  // Hugging Face's
  const std::vector<float> inv = c->RopeInverseFrequencies();
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(inv[i], 1.0f / (kDivisors[i] * std::pow(10000.0f, static_cast<float>(2 * i) / 16.0f))) << i;
  }
  auto given = Parse(b().U32("phi3.rope.scaling.original_context_length", 64).F32("phi3.rope.scaling.attn_factor", 1.25f),
                     &bytes);
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_EQ(given->rope_scaling.attention_factor, 1.25);
  auto no_original = Parse(b(), &bytes);  // original = context_length: no extension
  ASSERT_TRUE(no_original.ok()) << no_original.status();
  EXPECT_EQ(no_original->rope_scaling.original_max_position_embeddings, 256);
  EXPECT_EQ(no_original->rope_scaling.attention_factor, 1.0);
}

TEST(GgufLlamaConfigTest, HostileRopeFactorTensorsAreNamed) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto with = [](std::vector<float> v) {
    return Llama().TensorData("rope_freqs.weight", kF32, {v.size()}, FloatBytes(v));
  };
  auto bad = [&](int index, float value) {
    std::vector<float> v = kDivisors;
    v[static_cast<size_t>(index)] = value;
    return with(v);
  };
  const std::string f8 = FloatBytes(kDivisors);
  struct Case {
    GgufBuilder builder;
    std::string message;
  };
  std::vector<Case> cases = {
      {with({1, 1, 1, 1, 1, 1, 1}), "tensor 'rope_freqs.weight' has dims [7]; rope factors need head_dim / 2 = 8"},
      {with(std::vector<float>(16, 1.0f)), "has dims [16]"},
      {Llama().TensorData("rope_freqs.weight", kF32, {8, 2}, f8 + f8), "has dims [8,2]"},
      {Llama().TensorData("rope_freqs.weight", kBF16, {8}, std::string(16, '\x3f')),
       "tensor 'rope_freqs.weight' has type BF16; rope factors must be F32 or F16"},
      {Llama().TensorData("rope_freqs.weight", kI32, {8}, f8), "has type I32"},
      {bad(0, 0.0f), "tensor 'rope_freqs.weight' element 0 is 0: rope factors must be finite and > 0"},
      {bad(3, -2.0f), "element 3 is -2"},
      {bad(7, nan), "element 7 is"},
      {bad(5, inf), "element 5 is"},
      {Llama().TensorData("rope_freqs.weight", kF16, {8}, std::string("\x00\x3c\x00\x3c\x00\x7c\x00\x3c"
                                                                       "\x00\x3c\x00\x3c\x00\x3c\x00\x3c", 16)),
       "element 2 is"},  // F16 +inf
      {with(kDivisors).TensorData("rope_factors_short.weight", kF32, {8}, f8),
       "tensor 'rope_freqs.weight' and tensor 'rope_factors_short.weight' both give per-frequency rope factors"},
      {Llama("phi3").TensorData("rope_factors_short.weight", kF32, {8}, f8),
       "tensor 'rope_factors_long.weight' is missing"},
      {Llama("phi3").TensorData("rope_factors_long.weight", kF32, {8}, f8),
       "tensor 'rope_factors_short.weight' is missing"},
      {Llama("phi3")
           .TensorData("rope_factors_short.weight", kF32, {8}, f8)
           .TensorData("rope_factors_long.weight", kF32, {8}, FloatBytes({1, 1, 1, 1, 0, 1, 1, 1})),
       "tensor 'rope_factors_long.weight' element 4 is 0"},
      {Llama("phi3")
           .Str("phi3.rope.scaling.type", "linear")
           .F32("phi3.rope.scaling.factor", 2.0f)
           .TensorData("rope_factors_short.weight", kF32, {8}, f8)
           .TensorData("rope_factors_long.weight", kF32, {8}, f8),
       "cannot be combined with Phi-3's rope_factors tensors"},
      {Llama("phi3")
           .F32("phi3.rope.scaling.attn_factor", 0.0f)
           .TensorData("rope_factors_short.weight", kF32, {8}, f8)
           .TensorData("rope_factors_long.weight", kF32, {8}, f8),
       "'phi3.rope.scaling.attn_factor', or derived from context_length / original_context_length) is 0"},
      {Llama("phi3")
           .U32("phi3.rope.scaling.original_context_length", 1)  // ln(1) = 0: Hugging Face's formula diverges
           .TensorData("rope_factors_short.weight", kF32, {8}, f8)
           .TensorData("rope_factors_long.weight", kF32, {8}, f8),
       "must be finite and > 0"},
      {Llama().F32("llama.rope.scaling.attn_factor", 1.5f), "is supported only with Phi-3's rope_factors tensors"},
      {bad(6, 1e-45f), "tensor 'rope_freqs.weight' element 6 ("},  // a denormal: 1 / (f · base^e) overflows

  };
  for (const Case& c : cases) {
    std::string bytes;
    auto config = Parse(c.builder, &bytes);
    ASSERT_FALSE(config.ok()) << c.message;
    EXPECT_THAT(config.status().message(), HasSubstr(c.message));
  }
}

TEST(GgufLlamaConfigTest, FindsTheModelFile) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "gguf_find";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto none = FindGgufModelFile(dir, "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  std::ofstream(dir / "a.gguf") << "x";
  auto one = FindGgufModelFile(dir, "model.pt");
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->filename(), "a.gguf");
  std::ofstream(dir / "b.gguf") << "x";
  auto two = FindGgufModelFile(dir, "");
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.status().message(), HasSubstr("2 GGUF files (a.gguf, b.gguf)"));
  auto named = FindGgufModelFile(dir, "b.gguf");
  ASSERT_TRUE(named.ok() && named->has_value());
  EXPECT_EQ((*named)->filename(), "b.gguf");
  auto missing = FindGgufModelFile(dir, "c.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("'c.gguf' is not a file"));
  EXPECT_FALSE(FindGgufModelFile(dir, "../x.gguf").ok());
}

}  // namespace
}  // namespace infera::llm
