#include "llm/llm_model_options.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

using ::testing::HasSubstr;

constexpr MachineLimits kMachine{/*num_cores=*/4, /*physical_memory_bytes=*/int64_t{16} << 30};

absl::StatusOr<LlmModelOptions> Parse(const std::string& key, const std::string& value) {
  inference::ModelConfig config;
  (*config.mutable_parameters())[key].set_string_value(value);
  return LlmModelOptions::FromConfig(config, kMachine);
}

TEST(LlmModelOptionsBoundsTest, ByteSizesThatWouldWrapAreRejected) {
  EXPECT_EQ(ParseByteSize("8GiB"), int64_t{8} << 30);
  EXPECT_EQ(ParseByteSize("9223372036854775807"), INT64_MAX);
  // 2^34 GiB = 2^64 bytes: used to wrap to 0 (or a small number) silently.
  EXPECT_EQ(ParseByteSize("17179869184GiB"), std::nullopt);
  EXPECT_EQ(ParseByteSize("9999999999G"), std::nullopt);
  EXPECT_EQ(ParseByteSize("GiB"), std::nullopt);
  auto wrapped = Parse("kv_cache_memory_bytes", "17179869184GiB");
  EXPECT_EQ(wrapped.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrapped.status().message()), HasSubstr("kv_cache_memory_bytes"));
}

TEST(LlmModelOptionsBoundsTest, KvCacheBeyondPhysicalMemoryIsRejected) {
  EXPECT_TRUE(Parse("kv_cache_memory_bytes", "15GiB").ok());  // < 95% of 16 GiB
  auto too_big = Parse("kv_cache_memory_bytes", "16GiB");
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(std::string(too_big.status().message()), HasSubstr("kv_cache_memory_bytes"));
  EXPECT_THAT(std::string(too_big.status().message()), HasSubstr("95% of this machine's memory"));
  EXPECT_FALSE(Parse("kv_cache_memory_bytes", "1024GiB").ok());
}

TEST(LlmModelOptionsBoundsTest, ThreadsAreBoundedByTheCores) {
  EXPECT_EQ(Parse("num_threads", "16")->num_threads, 16);  // 4 x 4 cores
  for (const char* bad : {"17", "100000", "2147483648"}) {
    auto result = Parse("num_threads", bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("num_threads"));
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("[0, 16]"));
  }
}

TEST(LlmModelOptionsBoundsTest, EngineSizesHaveBounds) {
  struct Case {
    const char* key;
    const char* at_bound;
    const char* past_bound;
  };
  for (const Case& c : {Case{"max_num_seqs", "4096", "4097"},
                        Case{"max_num_batched_tokens", "1048576", "1048577"},
                        Case{"max_model_len", "16777216", "9223372036854775807"},
                        Case{"block_size", "1024", "1025"},
                        Case{"max_waiting_requests", "1048576", "1048577"}}) {
    EXPECT_TRUE(Parse(c.key, c.at_bound).ok()) << c.key;
    auto past = Parse(c.key, c.past_bound);
    ASSERT_FALSE(past.ok()) << c.key;
    EXPECT_EQ(past.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(past.status().message()), HasSubstr(c.key));
    EXPECT_THAT(std::string(past.status().message()), HasSubstr(c.at_bound));
  }
}

TEST(LlmModelOptionsQuantizationTest, ParsesTheThreeValuesAndNamesTheKeyOtherwise) {
  inference::ModelConfig empty;
  EXPECT_EQ(LlmModelOptions::FromConfig(empty, kMachine)->quantization, WeightQuantization::kNone);
  EXPECT_EQ(Parse("quantization", "none")->quantization, WeightQuantization::kNone);
  EXPECT_EQ(Parse("quantization", "int8")->quantization, WeightQuantization::kInt8);
  EXPECT_EQ(Parse("quantization", "int4")->quantization, WeightQuantization::kInt4);
  for (const char* bad : {"", "INT8", "int3", "q4_0", "int8 ", "fp8", "int4\n"}) {
    auto result = Parse("quantization", bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("parameter quantization"));
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("none, int8 or int4"));
  }
}

TEST(LlmModelOptionsQuantizationTest, QuantisedWeightsNeedThePackedKernel) {
  inference::ModelConfig config;
  (*config.mutable_parameters())["quantization"].set_string_value("int4");
  (*config.mutable_parameters())["matmul_kernel"].set_string_value("blas");
  auto result = LlmModelOptions::FromConfig(config, kMachine);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("quantization"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("matmul_kernel packed"));
  (*config.mutable_parameters())["matmul_kernel"].set_string_value("packed");
  EXPECT_TRUE(LlmModelOptions::FromConfig(config, kMachine).ok());
}

// kv_cache_dtype: the three names; anything else names the key and the accepted values.
TEST(LlmModelOptionsKvCacheDtypeTest, ParsesTheThreeDtypesAndRejectsOthers) {
  EXPECT_EQ(LlmModelOptions::FromConfig(inference::ModelConfig(), kMachine)->kv_cache_dtype, kDefaultKvCacheDtype);
  EXPECT_EQ(Parse("kv_cache_dtype", "fp32")->kv_cache_dtype, KvCacheDtype::kFloat32);
  EXPECT_EQ(Parse("kv_cache_dtype", "bf16")->kv_cache_dtype, KvCacheDtype::kBFloat16);
  EXPECT_EQ(Parse("kv_cache_dtype", "fp16")->kv_cache_dtype, KvCacheDtype::kFloat16);
  for (const char* bad : {"", "auto", "FP16", "float16", "fp8", "int8", " bf16", "bf16\n"}) {
    auto result = Parse("kv_cache_dtype", bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("kv_cache_dtype"));
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("fp32, bf16 or fp16"));
  }
}

// use_mmap: off by default (GGUF weights are copied onto huge pages); a boolean.
TEST(LlmModelOptionsUseMmapTest, DefaultsToTheCopyAndParsesABoolean) {
  EXPECT_FALSE(LlmModelOptions::FromConfig(inference::ModelConfig(), kMachine)->use_mmap);
  EXPECT_TRUE(Parse("use_mmap", "true")->use_mmap);
  EXPECT_FALSE(Parse("use_mmap", "false")->use_mmap);
  auto bad = Parse("use_mmap", "sometimes");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("use_mmap"));
}

// ModelLen: the parameter, else the model's length; longrope's default is its original
// length (the short factors' range), yarn's the original length × factor.
TEST(LlmModelOptionsModelLenTest, ParameterElseTheModelsLengthLongRopeCappedByDefault) {
  LlamaConfig model;
  model.max_position_embeddings = 131072;
  LlmModelOptions o;
  EXPECT_EQ(o.ModelLen(model), 131072);
  model.rope_scaling.type = "longrope";
  model.rope_scaling.original_max_position_embeddings = 4096;
  EXPECT_EQ(o.ModelLen(model), 4096);
  o.max_model_len = 32768;
  EXPECT_EQ(o.ModelLen(model), 32768);
  model.rope_scaling.type = "";
  EXPECT_EQ(o.ModelLen(model), 32768);
  // yarn: the original length times the factor (vLLM's), unless max_model_len says.
  model.rope_scaling.type = "yarn";
  model.rope_scaling.factor = 4.0;
  model.rope_scaling.original_max_position_embeddings = 32768;
  EXPECT_EQ(o.ModelLen(model), 32768);
  o.max_model_len.reset();
  EXPECT_EQ(o.ModelLen(model), 131072);
}

TEST(LlmModelOptionsTest, ParsesParametersAndByteSizes) {
  inference::ModelConfig config;
  (*config.mutable_parameters())["max_num_seqs"].set_string_value("4");
  (*config.mutable_parameters())["kv_cache_memory_bytes"].set_string_value("64MiB");
  (*config.mutable_parameters())["scheduling_policy"].set_string_value("priority");
  auto o = LlmModelOptions::FromConfig(config);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->max_num_seqs, 4);
  EXPECT_EQ(o->KvCacheBytes(1 << 30), 64 << 20);
  EXPECT_EQ(o->policy, SchedulingPolicy::kPriority);
  (*config.mutable_parameters())["block_size"].set_string_value("zero");
  EXPECT_THAT(std::string(LlmModelOptions::FromConfig(config).status().message()), HasSubstr("block_size"));
  EXPECT_EQ(ParseByteSize("2G"), int64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("12x"), std::nullopt);
}

}  // namespace
}  // namespace infera::llm

namespace infera::llm {
namespace {

absl::StatusOr<LlmModelOptions> ParseAll(std::initializer_list<std::pair<const char*, const char*>> params) {
  inference::ModelConfig config;
  for (const auto& [key, value] : params) (*config.mutable_parameters())[key].set_string_value(value);
  return LlmModelOptions::FromConfig(config, MachineLimits{4, int64_t{16} << 30});
}

TEST(LlmModelOptionsSpeculativeTest, NgramWithItsParameters) {
  auto o = ParseAll({{"speculative_model", "[ngram]"}, {"num_speculative_tokens", "5"},
                     {"ngram_prompt_lookup_max", "3"}, {"ngram_prompt_lookup_min", "2"}});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->speculative.enabled());
  EXPECT_EQ(o->speculative.method, SpeculativeConfig::Method::kNgram);
  EXPECT_EQ(o->speculative.num_speculative_tokens, 5);
  EXPECT_EQ(o->speculative.ngram_prompt_lookup_max, 3);
  EXPECT_EQ(o->speculative.ngram_prompt_lookup_min, 2);
  EXPECT_FALSE(ParseAll({})->speculative.enabled());  // off by default
}

TEST(LlmModelOptionsSpeculativeTest, DraftModelDirectory) {
  auto o = ParseAll({{"speculative_model", "draft"}, {"num_speculative_tokens", "3"}});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->speculative.enabled());
  EXPECT_EQ(o->speculative.method, SpeculativeConfig::Method::kDraftModel);
  EXPECT_EQ(o->speculative.draft_model_dir, "draft");
  EXPECT_EQ(o->speculative.num_speculative_tokens, 3);
  EXPECT_TRUE(ParseAll({{"speculative_model", "drafts/small"}, {"num_speculative_tokens", "3"}}).ok());
}

TEST(LlmModelOptionsSpeculativeTest, BadValuesNameTheParameter) {
  struct Case {
    std::initializer_list<std::pair<const char*, const char*>> params;
    const char* named;
  };
  for (const Case& c : {
           Case{{{"speculative_model", "/models/draft"}, {"num_speculative_tokens", "4"}}, "speculative_model"},
           Case{{{"speculative_model", "../other/1"}, {"num_speculative_tokens", "4"}}, "speculative_model"},
           Case{{{"speculative_model", "draft/../../x"}, {"num_speculative_tokens", "4"}}, "speculative_model"},
           Case{{{"speculative_model", ""}, {"num_speculative_tokens", "4"}}, "speculative_model"},
           Case{{{"speculative_model", "[eagle]"}, {"num_speculative_tokens", "4"}}, "speculative_model"},
           Case{{{"speculative_model", "draft"}}, "num_speculative_tokens"},
           Case{{{"speculative_model", "draft"}, {"num_speculative_tokens", "4"}, {"ngram_prompt_lookup_max", "2"}},
                "ngram_prompt_lookup_max"},
           Case{{{"speculative_model", "[ngram]"}}, "num_speculative_tokens"},
           Case{{{"speculative_model", "[ngram]"}, {"num_speculative_tokens", "0"}}, "num_speculative_tokens"},
           Case{{{"speculative_model", "[ngram]"}, {"num_speculative_tokens", "17"}}, "num_speculative_tokens"},
           Case{{{"speculative_model", "[ngram]"}, {"num_speculative_tokens", "x"}}, "num_speculative_tokens"},
           Case{{{"num_speculative_tokens", "4"}}, "num_speculative_tokens"},
           Case{{{"ngram_prompt_lookup_min", "1"}}, "ngram_prompt_lookup_min"},
           Case{{{"speculative_model", "[ngram]"}, {"num_speculative_tokens", "4"}, {"ngram_prompt_lookup_max", "65"}},
                "ngram_prompt_lookup_max"},
           Case{{{"speculative_model", "[ngram]"}, {"num_speculative_tokens", "4"}, {"ngram_prompt_lookup_max", "2"},
                 {"ngram_prompt_lookup_min", "3"}},
                "ngram_prompt_lookup_min"},
       }) {
    auto o = ParseAll(c.params);
    ASSERT_FALSE(o.ok()) << c.named;
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(o.status().message()), HasSubstr(c.named)) << o.status();
  }
}

}  // namespace
}  // namespace infera::llm
