// infera llm convert's pieces: the tensor mapping and its conventions, the architecture
// metadata both ways (read back by the server's own readers), and whole conversions of a
// tiny checkpoint written here, round trip and hostile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>

#include "common/str_cat.h"
#include "gguf/gguf_file.h"
#include "llm/convert/config_differences.h"
#include "llm/convert/conversion.h"
#include "llm/convert/convert_command.h"
#include "llm/convert/gguf_architecture_keys.h"
#include "llm/convert/gguf_writer.h"
#include "llm/convert/hf_config_json.h"
#include "llm/convert/output_types.h"
#include "llm/convert/rope_factor_tensors.h"
#include "llm/convert/safetensors_writer.h"
#include "llm/convert/tensor_mapping.h"
#include "llm/gguf_llama_config.h"
#include "llm/safetensors.h"

namespace infera::llm::convert {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("llm_convert_test_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string ConfigJson(const std::string& model_type, const std::string& extra = "") {
  return R"({"model_type": ")" + model_type +
         R"(", "vocab_size": 8, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 6,
  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "rms_norm_eps": 1e-5,
  "rope_theta": 10000.0, "max_position_embeddings": 256)" +
         extra + "}";
}

LlamaConfig MustParse(const std::string& text) {
  auto c = LlamaConfig::Parse(text);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : LlamaConfig{};
}

TEST(TensorMappingTest, PermutationMatchesInterleavedRopeAndIsItsOwnInverse) {
  // One head of 4 rows: rotate-half pairs (0,2), (1,3) become adjacent rows.
  EXPECT_EQ(HfRowOfGgufRow(0, 4, 1), 0);
  EXPECT_EQ(HfRowOfGgufRow(1, 4, 1), 2);
  EXPECT_EQ(HfRowOfGgufRow(2, 4, 1), 1);
  EXPECT_EQ(HfRowOfGgufRow(3, 4, 1), 3);
  for (int64_t r = 0; r < 64; ++r) {
    EXPECT_EQ(GgufRowOfHfRow(HfRowOfGgufRow(r, 64, 4), 64, 4), r);
    EXPECT_EQ(HfRowOfGgufRow(r, 64, 4) / 16, r / 16);  // rows stay in their head
  }
}

TEST(TensorMappingTest, LlamaPermutesQAndKPerHeadAndTiesWhenAsked) {
  LlamaConfig c = MustParse(ConfigJson("llama", R"(, "tie_word_embeddings": true)"));
  std::map<std::string, TensorMapping> by_gguf;
  for (const TensorMapping& m : TensorMappings(c)) by_gguf[m.gguf_name] = m;
  EXPECT_EQ(by_gguf.count("output.weight"), 0u);
  EXPECT_EQ(by_gguf["blk.0.attn_q.weight"].permute_heads, 4);
  EXPECT_EQ(by_gguf["blk.0.attn_k.weight"].permute_heads, 2);
  EXPECT_EQ(by_gguf["blk.0.attn_k.weight"].shape, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(by_gguf["blk.0.attn_v.weight"].permute_heads, 0);
  EXPECT_EQ(by_gguf["blk.0.attn_q.bias"].permute_heads, 4);
  EXPECT_TRUE(by_gguf["blk.0.attn_q.bias"].optional);
  EXPECT_FALSE(by_gguf["blk.0.attn_norm.weight"].plus_one);
  EXPECT_EQ(by_gguf["blk.5.ffn_down.weight"].hf_name, "model.layers.5.mlp.down_proj.weight");
}

TEST(TensorMappingTest, QwenDoesNotPermutePhi3IsFusedGemmaAddsOne) {
  for (const TensorMapping& m : TensorMappings(MustParse(ConfigJson("qwen3")))) EXPECT_EQ(m.permute_heads, 0);
  std::map<std::string, TensorMapping> phi;
  for (const TensorMapping& m : TensorMappings(MustParse(ConfigJson("phi3")))) phi[m.gguf_name] = m;
  EXPECT_EQ(phi["blk.0.attn_qkv.weight"].shape, (std::vector<int64_t>{4 * 16 + 2 * 2 * 16, 64}));
  EXPECT_EQ(phi["blk.0.ffn_up.weight"].hf_name, "model.layers.0.mlp.gate_up_proj.weight");
  EXPECT_EQ(phi["blk.0.ffn_up.weight"].shape, (std::vector<int64_t>{2 * 96, 64}));
  EXPECT_EQ(phi.count("blk.0.attn_q.weight"), 0u);
  std::map<std::string, TensorMapping> gemma;
  for (const TensorMapping& m : TensorMappings(MustParse(ConfigJson("gemma3_text")))) gemma[m.gguf_name] = m;
  EXPECT_TRUE(gemma["output_norm.weight"].plus_one);
  EXPECT_TRUE(gemma["blk.0.attn_q_norm.weight"].plus_one);
  EXPECT_EQ(gemma["blk.0.ffn_norm.weight"].hf_name, "model.layers.0.pre_feedforward_layernorm.weight");
  EXPECT_EQ(gemma["blk.0.post_attention_norm.weight"].hf_name, "model.layers.0.post_attention_layernorm.weight");
  EXPECT_FALSE(gemma["blk.0.attn_q.weight"].plus_one);
  EXPECT_EQ(gemma.count("output.weight"), 0u);  // Gemma ties by default
}

// config.json -> GGUF keys -> LlamaConfigFromGguf, and back through HfConfigJson -> Parse.
class ArchitectureRoundTripTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(ArchitectureRoundTripTest, BothWaysGiveTheSameConfig) {
  const LlamaConfig c = MustParse(ConfigJson(GetParam().first, GetParam().second));
  GgufWriter w;
  ASSERT_TRUE(AddArchitectureKeys(c, "t", w).ok());
  w.AddTensor("token_embd.weight", quant::BlockType::kF32, {c.hidden_size, c.vocab_size},
              static_cast<uint64_t>(c.hidden_size * c.vocab_size * 4));
  if (!c.tie_word_embeddings) {
    w.AddTensor("output.weight", quant::BlockType::kF32, {c.hidden_size, c.vocab_size},
                static_cast<uint64_t>(c.hidden_size * c.vocab_size * 4));
  }
  const fs::path path = TempDir("arch") / "m.gguf";
  ASSERT_TRUE(w.Write(path, false, [&](size_t, TensorSink& sink) {
                 std::vector<float> zeros(static_cast<size_t>(c.hidden_size * c.vocab_size));
                 return sink.Write(zeros.data(), zeros.size() * 4);
               }).ok());
  auto file = gguf::GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  auto got = LlamaConfigFromGguf(**file);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(ConfigDifferences(c, *got), ::testing::IsEmpty());
  const LlamaConfig back = MustParse(HfConfigJson(*got, WeightType::kF32));
  EXPECT_THAT(ConfigDifferences(c, back), ::testing::IsEmpty());
  fs::remove_all(path.parent_path());
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, ArchitectureRoundTripTest,
    ::testing::Values(std::make_pair("llama", ""),
                      std::make_pair("llama", R"(, "rope_scaling": {"rope_type": "linear", "factor": 2.0})"),
                      std::make_pair("mistral", R"(, "sliding_window": 16)"), std::make_pair("qwen2", ""),
                      std::make_pair("qwen2", R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                  "original_max_position_embeddings": 64})"),
                      std::make_pair("qwen3", R"(, "rope_scaling": {"rope_type": "yarn", "factor": 2.0,
                                                  "attention_factor": 1.5})"),
                      std::make_pair("qwen3", R"(, "tie_word_embeddings": true)"),
                      std::make_pair("phi3", R"(, "sliding_window": 32)"),
                      std::make_pair("gemma2", R"(, "sliding_window": 16, "query_pre_attn_scalar": 32)"),
                      std::make_pair("gemma3_text", R"(, "sliding_window": 16, "sliding_window_pattern": 3)"),
                      std::make_pair("gemma3_text", R"(, "sliding_window": 16)")));

TEST(ArchitectureKeysTest, RefusesWhatGgufCannotSay) {
  GgufWriter w;
  LlamaConfig dynamic = MustParse(ConfigJson("llama"));
  dynamic.rope_scaling.type = "dynamic";
  auto s = AddArchitectureKeys(dynamic, "t", w);
  EXPECT_THAT(s.message(), HasSubstr("rope_scaling type 'dynamic' cannot be written as GGUF"));
  s = AddArchitectureKeys(
      MustParse(ConfigJson("qwen2", R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": 16})")),
      "t", w);
  EXPECT_THAT(s.message(),
              HasSubstr("rope_scaling yarn with beta_fast 16, beta_slow 1, truncate true cannot be written as GGUF"));
  s = AddArchitectureKeys(MustParse(ConfigJson("qwen2", R"(, "use_sliding_window": true, "sliding_window": 8, "max_window_layers": 2)")),
                          "t", w);
  EXPECT_THAT(s.message(), HasSubstr("sliding windows on qwen2"));
  s = AddArchitectureKeys(MustParse(ConfigJson("gemma3_text", R"(, "sliding_window": 16, "rope_local_base_freq": 5.0)")),
                          "t", w);
  EXPECT_THAT(s.message(), HasSubstr("rope_local_base_freq"));
}

std::string Llama3(double factor, double low, double high, int64_t original) {
  return StrCat(R"(, "rope_scaling": {"rope_type": "llama3", "factor": )", factor, R"(, "low_freq_factor": )", low,
                R"(, "high_freq_factor": )", high, R"(, "original_max_position_embeddings": )", original, "}");
}

// llama3's rope_freqs divisors reproduce Hugging Face's frequencies within the stated
// bound, for the tiny test shape and Llama 3.1 8B's / 3.2 1B's real parameters.
TEST(RopeFactorTensorsTest, Llama3DivisorsGiveTheCheckpointsFrequencies) {
  struct Shape {
    int64_t head_dim;
    double theta;
    std::string scaling;
  };
  const Shape shapes[] = {{16, 10000.0, Llama3(8, 1, 4, 64)},
                          {128, 500000.0, Llama3(8, 1, 4, 8192)},
                          {64, 500000.0, Llama3(32, 1, 4, 8192)}};
  for (const Shape& shape : shapes) {
    std::string json = ConfigJson("llama", shape.scaling);
    json = std::regex_replace(json, std::regex(R"("head_dim": 16)"), StrCat(R"("head_dim": )", shape.head_dim));
    json = std::regex_replace(json, std::regex(R"("rope_theta": 10000.0)"), StrCat(R"("rope_theta": )", shape.theta));
    const LlamaConfig c = MustParse(json);
    ASSERT_EQ(c.head_dim, shape.head_dim);
    const std::vector<RopeFactorTensor> tensors = RopeFactorTensors(c);
    ASSERT_EQ(tensors.size(), 1u);
    EXPECT_EQ(tensors[0].name, "rope_freqs.weight");
    ASSERT_EQ(tensors[0].values.size(), static_cast<size_t>(shape.head_dim / 2));
    LlamaConfig gguf = c;  // what the server reads from the GGUF
    gguf.rope_scaling = RopeScaling();
    gguf.rope_scaling.frequency_divisors.assign(tensors[0].values.begin(), tensors[0].values.end());
    const std::vector<float> want = c.RopeInverseFrequencies(), got = gguf.RopeInverseFrequencies();
    int scaled = 0, between = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_LE(std::abs(got[i] - want[i]), kRopeFrequencyTolerance * want[i]) << shape.head_dim << " " << i;
      const float d = tensors[0].values[i];
      if (d != 1.0f) ++scaled;
      if (d != 1.0f && d != static_cast<float>(c.rope_scaling.factor)) ++between;
    }
    EXPECT_GT(scaled, 0) << shape.head_dim;  // the factors differ from 1 at this head size
    EXPECT_GT(between, 0) << shape.head_dim;  // and the smooth band is exercised
    EXPECT_THAT(ConfigDifferences(c, gguf), ::testing::IsEmpty());
    gguf.rope_scaling.frequency_divisors[0] *= 1.01;  // a different divisor is a difference
    EXPECT_THAT(ConfigDifferences(c, gguf), ::testing::Not(::testing::IsEmpty()));
  }
}

TEST(OutputTypesTest, NamesAndQ4KM) {
  auto t = ParseGgufType("q4_k_m");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(MatrixType(*t, "blk.3.attn_v.weight"), quant::BlockType::kQ6_K);
  EXPECT_EQ(MatrixType(*t, "blk.3.ffn_down.weight"), quant::BlockType::kQ6_K);
  EXPECT_EQ(MatrixType(*t, "blk.3.attn_q.weight"), quant::BlockType::kQ4_K);
  EXPECT_EQ(ParseGgufType("Q8_0")->matrices, quant::BlockType::kQ8_0);
  EXPECT_THAT(ParseGgufType("iq2_xs").status().message(), HasSubstr("not a GGUF type"));
  EXPECT_THAT(ParseSafetensorsType("q8_0").status().message(), HasSubstr("not a safetensors type"));
}

// A tiny checkpoint written with SafetensorsWriter: random f32 weights for `model_type`.
void WriteCheckpoint(const fs::path& dir, const std::string& model_type, const std::string& extra,
                     const std::vector<std::string>& drop = {}, const std::string& reshape = "") {
  const LlamaConfig c = MustParse(ConfigJson(model_type, extra));
  std::ofstream(dir / "config.json") << ConfigJson(model_type, extra);
  std::ofstream(dir / "tokenizer.json")
      << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7},
             "merges": ["a b"]}, "pre_tokenizer": {"type": "ByteLevel"}, "decoder": {"type": "ByteLevel"}})";
  std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": "{{ messages[0]['content'] }}"})";
  SafetensorsWriter w;
  std::vector<int64_t> sizes;
  for (const TensorMapping& m : TensorMappings(c)) {
    if (m.optional || std::find(drop.begin(), drop.end(), m.hf_name) != drop.end()) continue;
    std::vector<int64_t> shape = m.shape;
    if (m.hf_name == reshape) shape[0] += 1;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    w.AddTensor(m.hf_name, WeightType::kF32, shape);
    sizes.push_back(n);
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  ASSERT_TRUE(w.Write(dir / "model.safetensors", false, [&](size_t i, TensorSink& sink) {
                 std::vector<float> v(static_cast<size_t>(sizes[i]));
                 for (float& x : v) x = normal(rng);
                 return sink.Write(v.data(), v.size() * 4);
               }).ok());
}

std::vector<float> Floats(const TensorView& v) {
  std::vector<float> out(static_cast<size_t>(v.NumElements()));
  std::memcpy(out.data(), v.data, out.size() * 4);
  return out;
}

// Phi-3.5-style: factors that GGUF stores as F32 (exact in float) and config.json as lists.
const char* const kLongrope = R"(, "original_max_position_embeddings": 64, "rope_scaling": {"type": "longrope",
  "short_factor": [1.0, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 4.5], "long_factor": [1, 2, 4, 8, 16, 24, 32, 40.5]})";

class ConversionRoundTripTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(ConversionRoundTripTest, SafetensorsToGgufAndBackKeepsEveryWeight) {
  const fs::path root = TempDir("rt");
  fs::create_directories(root / "hf");
  WriteCheckpoint(root / "hf", GetParam().first, GetParam().second);
  ConversionOptions to_gguf{root / "hf", root / "m.gguf", std::nullopt, false, ""};
  auto s = SafetensorsToGguf(to_gguf);
  ASSERT_TRUE(s.ok()) << s.status();
  auto file = gguf::GgufFile::Open(root / "m.gguf");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->metadata().GetString("tokenizer.chat_template").value_or(""), "{{ messages[0]['content'] }}");
  EXPECT_EQ((*file)->alignment(), kAlignment);
  ConversionOptions back{root / "m.gguf", (root / "back") / "", std::nullopt, false, ""};  // "back/" too
  auto b = GgufToSafetensors(back);
  ASSERT_TRUE(b.ok()) << b.status();
  auto original = SafetensorsModel::Open(root / "hf");
  auto converted = SafetensorsModel::Open(root / "back");
  ASSERT_TRUE(original.ok() && converted.ok());
  EXPECT_EQ((*original)->Names(), (*converted)->Names());
  for (const std::string& name : (*original)->Names()) {
    const std::vector<float> a = Floats(*(*original)->Get(name)), z = Floats(*(*converted)->Get(name));
    ASSERT_EQ(a.size(), z.size()) << name;
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], z[i], 1e-6) << name << "[" << i << "]";
  }
  auto cfg = LlamaConfig::Load(root / "back" / "config.json");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_THAT(ConfigDifferences(MustParse(ConfigJson(GetParam().first, GetParam().second)), *cfg),
              ::testing::IsEmpty());
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Architectures, ConversionRoundTripTest,
                         ::testing::Values(std::make_pair("llama", ""),
                                           std::make_pair("mistral", R"(, "sliding_window": 16)"),
                                           std::make_pair("qwen3", ""), std::make_pair("phi3", ""),
                                           std::make_pair("phi3", kLongrope),
                                           std::make_pair("gemma2", R"(, "sliding_window": 16)"),
                                           std::make_pair("gemma3_text", R"(, "sliding_window": 16)")));

TEST(ConversionTest, HostileCheckpointsAreOneLineErrorsAndLeaveNoOutput) {
  const fs::path root = TempDir("hostile");
  auto attempt = [&](const std::string& name, const std::string& type, const std::string& extra,
                     std::vector<std::string> drop, std::string reshape) {
    fs::create_directories(root / name);
    WriteCheckpoint(root / name, type, extra, drop, reshape);
    ConversionOptions o{root / name, root / (name + ".gguf"), std::nullopt, false, ""};
    auto s = SafetensorsToGguf(o);
    EXPECT_FALSE(fs::exists(root / (name + ".gguf"))) << name;
    return s.ok() ? std::string("ok") : std::string(s.status().message());
  };
  EXPECT_THAT(attempt("missing", "llama", "", {"model.layers.1.mlp.up_proj.weight"}, ""),
              HasSubstr("tensor 'model.layers.1.mlp.up_proj.weight' is missing"));
  EXPECT_THAT(attempt("shape", "llama", "", {}, "model.layers.0.self_attn.k_proj.weight"),
              HasSubstr("tensor 'model.layers.0.self_attn.k_proj.weight' has shape [33,64]"));
  fs::create_directories(root / "q");
  WriteCheckpoint(root / "q", "llama", "");
  ConversionOptions o{root / "q", root / "q.gguf", std::string("q4_k"), false, ""};
  EXPECT_THAT(std::string(SafetensorsToGguf(o).status().message()),
              HasSubstr("cannot be stored as Q4_K"));  // rows of 64 are not whole 256-blocks
  o.output = root / "no_such_dir" / "q.gguf";
  o.type = "q8_0";
  EXPECT_THAT(std::string(SafetensorsToGguf(o).status().message()), HasSubstr("does not exist"));
  o.output = root / "q.gguf";
  ASSERT_TRUE(SafetensorsToGguf(o).ok());
  EXPECT_THAT(std::string(SafetensorsToGguf(o).status().message()), HasSubstr("exists (pass --force"));
  o.overwrite = true;
  EXPECT_TRUE(SafetensorsToGguf(o).ok());
  for (const auto& e : fs::directory_iterator(root)) EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos);
  fs::remove_all(root);
}

// llama3 -> GGUF: a rope_freqs.weight of the divisors (the server reads the same
// frequencies back: Verify); GGUF -> safetensors of such a file is refused naming it.
TEST(ConversionTest, Llama3BecomesRopeFreqsAndDoesNotConvertBack) {
  const fs::path root = TempDir("llama3");
  fs::create_directories(root / "hf");
  WriteCheckpoint(root / "hf", "llama", Llama3(8, 1, 4, 64));
  ConversionOptions o{root / "hf", root / "m.gguf", std::nullopt, false, ""};
  auto s = SafetensorsToGguf(o);
  ASSERT_TRUE(s.ok()) << s.status();
  auto file = gguf::GgufFile::Open(root / "m.gguf");
  ASSERT_TRUE(file.ok()) << file.status();
  const gguf::GgufTensor* t = (*file)->FindTensor("rope_freqs.weight");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, gguf::GgmlType::kF32);
  EXPECT_EQ(t->dims, std::vector<int64_t>{8});
  const LlamaConfig c = MustParse(ConfigJson("llama", Llama3(8, 1, 4, 64)));
  const std::vector<double> divisors = Llama3FrequencyDivisors(c);
  for (size_t i = 0; i < 8; ++i) {
    float v;
    std::memcpy(&v, t->data + 4 * i, 4);
    EXPECT_EQ(v, static_cast<float>(divisors[i])) << i;
  }
  auto read = LlamaConfigFromGguf(**file);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(ConfigDifferences(c, *read), ::testing::IsEmpty());
  ConversionOptions back{root / "m.gguf", root / "back", std::nullopt, false, ""};
  auto b = GgufToSafetensors(back);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("tensor 'rope_freqs.weight'"));
  EXPECT_FALSE(fs::exists(root / "back" / "config.json"));
  fs::remove_all(root);
}

// longrope -> GGUF as llama.cpp writes it: the two factor tensors and the keys.
TEST(ConversionTest, LongropeWritesFactorTensorsAndKeys) {
  const fs::path root = TempDir("longrope");
  fs::create_directories(root / "hf");
  WriteCheckpoint(root / "hf", "phi3", kLongrope);
  ConversionOptions o{root / "hf", root / "m.gguf", std::nullopt, false, ""};
  ASSERT_TRUE(SafetensorsToGguf(o).ok());
  auto file = gguf::GgufFile::Open(root / "m.gguf");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->metadata().GetUint("phi3.rope.scaling.original_context_length").value_or(0), 64u);
  EXPECT_NEAR((*file)->metadata().GetFloat("phi3.rope.scaling.attn_factor").value_or(0),
              std::sqrt(1 + std::log(4.0) / std::log(64.0)), 1e-6);
  for (const char* name : {"rope_factors_short.weight", "rope_factors_long.weight"}) {
    const gguf::GgufTensor* t = (*file)->FindTensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->type, gguf::GgmlType::kF32);
    EXPECT_EQ(t->dims, std::vector<int64_t>{8});
  }
  auto read = LlamaConfigFromGguf(**file);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->rope_scaling.type, "longrope");
  EXPECT_EQ(read->rope_scaling.long_factor.back(), 40.5);
  EXPECT_EQ(read->rope_scaling.frequency_divisors[2], 1.25);
  fs::remove_all(root);
}

TEST(ConversionTest, ChatTemplateJinjaFileWhenTokenizerConfigHasNone) {
  const fs::path root = TempDir("jinja");
  fs::create_directories(root / "hf");
  WriteCheckpoint(root / "hf", "qwen2", "");
  std::ofstream(root / "hf" / "tokenizer_config.json") << "{}";
  std::ofstream(root / "hf" / "chat_template.jinja") << "{{ 'from the jinja file' }}";
  ConversionOptions o{root / "hf", root / "m.gguf", std::nullopt, false, ""};
  ASSERT_TRUE(SafetensorsToGguf(o).ok());
  auto file = gguf::GgufFile::Open(root / "m.gguf");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->metadata().GetString("tokenizer.chat_template").value_or(""), "{{ 'from the jinja file' }}");
  fs::remove_all(root);
}

TEST(ConvertCommandTest, FlagsAndOneLineErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(RunConvertCommand({"--help"}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("infera llm convert --input DIR --output FILE.gguf"));
  EXPECT_EQ(RunConvertCommand({"--output", "x.gguf"}, out, err), 2);
  EXPECT_EQ(err.str(), "infera llm convert: --input is required (see 'infera llm convert --help')\n");
  err.str("");
  EXPECT_EQ(RunConvertCommand({"--input=a", "--bogus"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("unknown flag '--bogus'"));
  err.str("");
  EXPECT_EQ(RunConvertCommand({"--input", "/nonexistent/x", "--output", "y"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("is neither a folder nor a file"));
  auto f = ParseConvertFlags({"-i", "in", "-o", "out.gguf", "--type=q8_0", "--force"});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->options.type.value_or(""), "q8_0");
  EXPECT_TRUE(f->options.overwrite);
}

}  // namespace
}  // namespace infera::llm::convert
