#include "llm/gguf_llama_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

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
    GgufBuilder b = Gemma3();
    b.Tensor("rope_freqs.weight", 0, {32}, 128);
    cases.push_back({b, "rope_freqs.weight"});
  }
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
