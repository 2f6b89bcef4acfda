#include "repository/model_config_loader.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

constexpr char kSimple[] = R"pb(
  name: "simple"
  backend: "add_sub"
  max_batch_size: 8
  input [
    { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
    { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
  ]
  output [
    { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
    { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
  ]
)pb";

absl::StatusOr<inference::ModelConfig> ParseAndValidate(const std::string& text,
                                                        const std::string& model = "simple") {
  auto config = ParseModelConfig(text, "m/config.pbtxt");
  if (!config.ok()) return config.status();
  absl::Status status = ValidateModelConfig("m/config.pbtxt", model, *config);
  if (!status.ok()) return status;
  return config;
}

std::string Message(const absl::StatusOr<inference::ModelConfig>& result) {
  return std::string(result.status().message());
}

TEST(ModelConfigLoaderTest, ParsesTritonSimpleAndFillsDefaults) {
  auto config = ParseAndValidate(kSimple);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "simple");
  EXPECT_EQ(config->max_batch_size(), 8);
  ASSERT_EQ(config->input_size(), 2);
  EXPECT_EQ(config->input(1).data_type(), inference::TYPE_INT32);
  // Defaults: one CPU instance, latest-1 version policy.
  ASSERT_EQ(config->instance_group_size(), 1);
  EXPECT_EQ(config->instance_group(0).count(), 1);
  EXPECT_EQ(config->instance_group(0).kind(), inference::ModelInstanceGroup::KIND_CPU);
  EXPECT_EQ(config->version_policy().latest().num_versions(), 1u);
}

TEST(ModelConfigLoaderTest, NameDefaultsToDirectory) {
  std::string text = kSimple;
  text.replace(text.find("name: \"simple\""), 14, "");
  auto config = ParseAndValidate(text, "dirname");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "dirname");
}

TEST(ModelConfigLoaderTest, AcceptsTritonFieldsWeSupport) {
  auto config = ParseAndValidate(R"pb(
    platform: "pytorch_libtorch"
    max_batch_size: 4
    version_policy: { specific: { versions: [ 1, 3 ] } }
    input [ { name: "INPUT__0" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, -1, -1 ] } ]
    output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1000 ] reshape: { shape: [ 10, 100 ] } } ]
    instance_group [ { count: 2 kind: KIND_CPU } ]
    dynamic_batching { preferred_batch_size: [ 2, 4 ] max_queue_delay_microseconds: 100 }
    parameters: { key: "INTRA_OP_THREAD_COUNT" value: { string_value: "1" } }
    model_warmup [ { name: "w" batch_size: 1 count: 2
                     inputs { key: "INPUT__0" value: { data_type: TYPE_FP32 dims: [ 3, 8, 8 ] zero_data: true } } } ]
  )pb");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->instance_group(0).count(), 2);
  EXPECT_EQ(config->parameters().at("INTRA_OP_THREAD_COUNT").string_value(), "1");
}

struct BadConfig {
  std::string name;
  std::string text;
  std::vector<std::string> expected;  // substrings of the error
};

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, ErrorNamesFileFieldAndProblem) {
  auto config = ParseAndValidate(GetParam().text);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(config), HasSubstr("m/config.pbtxt"));
  for (const std::string& part : GetParam().expected) EXPECT_THAT(Message(config), HasSubstr(part));
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, BadConfigTest,
    ::testing::Values(
        BadConfig{"UnknownField", "name: \"simple\"\nfoo: 3\n", {"m/config.pbtxt:2:", "foo"}},
        BadConfig{"SyntaxError", "name: \"simple\" input [ { name: \"x\" ", {"m/config.pbtxt:1:"}},
        BadConfig{"WrongFieldType", "max_batch_size: \"eight\"", {"max_batch_size"}},
        BadConfig{"UnknownEnum", "input [ { name: \"x\" data_type: TYPE_FLOAT32 dims: [1] } ]",
                  {"TYPE_FLOAT32"}},
        BadConfig{"NameMismatch", "name: \"other\"", {"name", "'other'", "'simple'"}},
        BadConfig{"NegativeBatch", "max_batch_size: -1", {"max_batch_size", "-1"}},
        BadConfig{"EmptyInputName", "input [ { data_type: TYPE_FP32 dims: [1] } ]",
                  {"input[0].name"}},
        BadConfig{"DuplicateInput",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [1] },"
                  " { name: \"a\" data_type: TYPE_FP32 dims: [1] } ]",
                  {"input[1].name", "twice"}},
        BadConfig{"MissingDataType", "output [ { name: \"o\" dims: [1] } ]",
                  {"output[0].data_type"}},
        BadConfig{"BadDim", "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ 4, -2 ] } ]",
                  {"input[0].dims[1]", "-2"}},
        BadConfig{"BadReshape",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ 4, 4 ] reshape: { shape: [ 15 ] } } ]",
                  {"input[0].reshape", "[15]", "[4,4]"}},
        BadConfig{"GpuInstances", "instance_group [ { kind: KIND_GPU count: 1 } ]",
                  {"instance_group[0].kind", "GPU"}},
        BadConfig{"NegativeCount", "instance_group [ { count: -2 } ]",
                  {"instance_group[0].count"}},
        BadConfig{"BatchingWithoutBatch", "dynamic_batching { }",
                  {"dynamic_batching", "max_batch_size"}},
        BadConfig{"PreferredTooLarge",
                  "max_batch_size: 4 dynamic_batching { preferred_batch_size: [ 8 ] }",
                  {"preferred_batch_size[0]", "8"}},
        BadConfig{"PriorityOutOfRange",
                  "max_batch_size: 4 dynamic_batching { priority_levels: 2 default_priority_level: 3 }",
                  {"default_priority_level"}},
        BadConfig{"SpecificEmpty", "version_policy { specific { } }",
                  {"version_policy.specific.versions"}},
        BadConfig{"SpecificZero", "version_policy { specific { versions: [ 0 ] } }",
                  {"version_policy.specific.versions", "0"}},
        BadConfig{"WarmupUnknownInput",
                  "model_warmup [ { name: \"w\" inputs { key: \"nope\" value: { data_type: TYPE_FP32 dims: [1] zero_data: true } } } ]",
                  {"model_warmup[0].inputs", "nope"}},
        BadConfig{"WarmupBatchTooLarge",
                  "max_batch_size: 2 model_warmup [ { name: \"w\" batch_size: 3 } ]",
                  {"model_warmup[0].batch_size"}},
        BadConfig{"Decoupled", "model_transaction_policy { decoupled: true }", {"decoupled"}},
        BadConfig{"ShapeTensor",
                  "input [ { name: \"a\" data_type: TYPE_INT32 dims: [1] is_shape_tensor: true } ]",
                  {"is_shape_tensor"}},
        BadConfig{"UnsupportedScheduling", "sequence_batching { }", {"sequence_batching"}}),
    [](const auto& info) { return info.param.name; });

TEST(ModelConfigLoaderTest, LoadsFromDirectoryAndReportsMissingFile) {
  const auto dir = std::filesystem::temp_directory_path() / "infera_config_test" / "simple";
  std::filesystem::remove_all(dir.parent_path());
  std::filesystem::create_directories(dir);
  EXPECT_EQ(LoadModelConfig(dir).status().code(), absl::StatusCode::kNotFound);
  std::ofstream(dir / "config.pbtxt") << kSimple;
  auto config = LoadModelConfig(dir);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "simple");
  std::ofstream(dir / "config.pbtxt") << "max_batch_size: oops";
  auto bad = LoadModelConfig(dir);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr((dir / "config.pbtxt").string()));
  std::filesystem::remove_all(dir.parent_path());
}

}  // namespace
}  // namespace infera
