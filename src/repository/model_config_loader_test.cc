#include "repository/model_config_loader.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/str_cat.h"

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
        BadConfig{"ShapeTensor",
                  "input [ { name: \"a\" data_type: TYPE_INT32 dims: [1] is_shape_tensor: true } ]",
                  {"is_shape_tensor"}},
        // Sequence batching is served (docs/sequence_batching.md), implicit state is not.
        BadConfig{"UnsupportedSequenceState", "sequence_batching { state [ { input_name: \"x\" } ] }",
                  {"sequence_batching", "state"}},
        // Bounds (config_limits.h): each names the field and the limit.
        BadConfig{"MaxBatchSizeHuge", "max_batch_size: 2147483647",
                  {"max_batch_size", "2147483647", "limit of 65536"}},
        BadConfig{"DimensionHuge",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ 4294967296 ] } ]",
                  {"input[0].dims[0]", "limit of 2147483647"}},
        BadConfig{"ReshapeOverflows",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ 2147483647, 2147483647, 2147483647 ]"
                  " reshape: { shape: [ 2147483647, 2147483647, 2147483647 ] } } ]",
                  {"input[0]", "more than 2^63 elements"}},
        BadConfig{"PriorityLevelsHuge",
                  "max_batch_size: 4 dynamic_batching { priority_levels: 18446744073709551615 }",
                  {"dynamic_batching.priority_levels", "limit of 256"}},
        BadConfig{"PriorityLevelsMillion",
                  "max_batch_size: 4 dynamic_batching { priority_levels: 1000000 }",
                  {"dynamic_batching.priority_levels", "1000000", "limit of 256"}},
        BadConfig{"QueueDelayHuge",
                  "max_batch_size: 4 dynamic_batching { max_queue_delay_microseconds: 9223372036854775807 }",
                  {"dynamic_batching.max_queue_delay_microseconds", "limit of 3600000000"}},
        BadConfig{"DefaultTimeoutHuge",
                  "max_batch_size: 4 dynamic_batching { default_queue_policy { "
                  "default_timeout_microseconds: 18446744073709551615 } }",
                  {"dynamic_batching.default_queue_policy.default_timeout_microseconds",
                   "limit of 86400000000"}},
        BadConfig{"LevelTimeoutHuge",
                  "max_batch_size: 4 dynamic_batching { priority_levels: 2 priority_queue_policy { "
                  "key: 2 value { default_timeout_microseconds: 9223372036854775807 } } }",
                  {"dynamic_batching.priority_queue_policy[2].default_timeout_microseconds"}},
        BadConfig{"QueueSizeHuge",
                  "max_batch_size: 4 dynamic_batching { default_queue_policy { max_queue_size: 4294967295 } }",
                  {"dynamic_batching.default_queue_policy.max_queue_size", "limit of 16777216"}},
        BadConfig{"LatestVersionsHuge", "version_policy { latest { num_versions: 4294967295 } }",
                  {"version_policy.latest.num_versions", "limit of 1024"}},
        BadConfig{"InstanceGroupHuge", "instance_group [ { count: 1000000 } ]",
                  {"instance_group[0].count", "limit of 64"}},
        BadConfig{"WarmupCountHuge",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ 1 ] } ]"
                  " model_warmup [ { name: \"w\" count: 4294967295 inputs { key: \"a\" value: {"
                  " data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } } } ]",
                  {"model_warmup[0].count", "limit of 1000"}},
        BadConfig{"WarmupRunsInAll",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ -1 ] } ]"
                  " model_warmup [ { name: \"w0\" count: 600 inputs { key: \"a\" value: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } } }, { name: \"w1\" count: 600 inputs { key: \"a\" value: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } } } ]",
                  {"model_warmup", "1200 runs in all", "limit of 1000"}},
        BadConfig{"WarmupBytesInAll",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ -1 ] } ]"
                  " model_warmup [ { name: \"w0\" count: 1 inputs { key: \"a\" value: { data_type: TYPE_FP32 dims: [ 67108864 ] zero_data: true } } }, { name: \"w1\" count: 1 inputs { key: \"a\" value: { data_type: TYPE_FP32 dims: [ 67108864 ] zero_data: true } } }, { name: \"w2\" count: 1 inputs { key: \"a\" value: { data_type: TYPE_FP32 dims: [ 67108864 ] zero_data: true } } }, { name: \"w3\" count: 1 inputs { key: \"a\" value: { data_type: TYPE_FP32 dims: [ 67108864 ] zero_data: true } } }, { name: \"w4\" count: 1 inputs { key: \"a\" value: { data_type: TYPE_FP32 dims: [ 67108864 ] zero_data: true } } } ]",
                  {"model_warmup", "limit of 1073741824 bytes in all"}},
        BadConfig{"WarmupDimsHuge",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ -1 ] } ]"
                  " model_warmup [ { name: \"w\" inputs { key: \"a\" value: {"
                  " data_type: TYPE_FP32 dims: [ 1099511627776 ] zero_data: true } } } ]",
                  {"model_warmup[0].inputs[a].dims", "limit of 268435456 bytes"}},
        BadConfig{"WarmupDimsOverflow",
                  "input [ { name: \"a\" data_type: TYPE_FP32 dims: [ -1, -1 ] } ]"
                  " model_warmup [ { name: \"w\" inputs { key: \"a\" value: {"
                  " data_type: TYPE_FP32 dims: [ 4611686018427387904, 4 ] zero_data: true } } } ]",
                  {"model_warmup[0].inputs[a].dims"}},
        BadConfig{"WarmupBytesHuge",
                  "input [ { name: \"a\" data_type: TYPE_STRING dims: [ -1 ] } ]"
                  " model_warmup [ { name: \"w\" inputs { key: \"a\" value: {"
                  " data_type: TYPE_STRING dims: [ 2147483648 ] zero_data: true } } } ]",
                  {"model_warmup[0].inputs[a].dims", "limit of 268435456 bytes"}},
        BadConfig{"WarmupFileAbsolute",
                  "input [ { name: \"a\" data_type: TYPE_UINT8 dims: [ -1 ] } ]"
                  " model_warmup [ { name: \"w\" inputs { key: \"a\" value: {"
                  " data_type: TYPE_UINT8 dims: [ 4 ] input_data_file: \"/etc/passwd\" } } } ]",
                  {"model_warmup[0].inputs[a].input_data_file", "inside the model's warmup/ folder"}},
        BadConfig{"WarmupFileDotDot",
                  "input [ { name: \"a\" data_type: TYPE_UINT8 dims: [ -1 ] } ]"
                  " model_warmup [ { name: \"w\" inputs { key: \"a\" value: {"
                  " data_type: TYPE_UINT8 dims: [ 4 ] input_data_file: \"../../../../etc/passwd\" } } } ]",
                  {"model_warmup[0].inputs[a].input_data_file", "inside the model's warmup/ folder"}}),
    [](const auto& info) { return info.param.name; });

TEST(ModelConfigLoaderTest, EscapingWarmupFileErrorDoesNotSayWhetherTheFileExists) {
  // The message is the same for a file that exists and one that does not: no oracle.
  auto message = [](const std::string& file) {
    auto config = ParseAndValidate(
        "input [ { name: \"a\" data_type: TYPE_UINT8 dims: [ -1 ] } ]"
        " model_warmup [ { name: \"w\" inputs { key: \"a\" value: {"
        " data_type: TYPE_UINT8 dims: [ 4 ] input_data_file: \"" + file + "\" } } } ]");
    EXPECT_FALSE(config.ok());
    std::string text = Message(config);
    if (size_t at = text.find(file); at != std::string::npos) text.replace(at, file.size(), "<file>");
    return text;
  };
  EXPECT_EQ(message("../../../../etc/passwd"), message("../../../../etc/no_such_file_here"));
  EXPECT_EQ(message("/etc/passwd"), message("/no_such_file_here"));
}

TEST(ModelConfigLoaderTest, TotalInstancesAreBoundedByTheMachinesCores) {
  // 64 groups of 64 instances would be 4,096 threads.
  std::string groups = "instance_group [ ";
  for (int i = 0; i < 64; ++i) groups += StrCat(i ? ", " : "", "{ count: 64 }");
  groups += " ]";
  auto config = ParseModelConfig(groups, "m/config.pbtxt");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::Status status = ValidateModelConfig("m/config.pbtxt", "simple", *config,
                                            MachineLimits{/*num_cores=*/2, int64_t{8} << 30});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("instance_group"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("4096 instances"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("limit of 64 per model"));

  // 8 per core: 3 groups of 64 fit a 32-core machine, not a 16-core one.
  auto three = ParseModelConfig("instance_group [ { count: 64 }, { count: 64 }, { count: 64 } ]",
                                "m/config.pbtxt");
  ASSERT_TRUE(three.ok());
  inference::ModelConfig copy = *three;
  EXPECT_TRUE(ValidateModelConfig("m/config.pbtxt", "simple", *three,
                                  MachineLimits{32, int64_t{8} << 30}).ok());
  EXPECT_THAT(std::string(ValidateModelConfig("m/config.pbtxt", "simple", copy,
                                              MachineLimits{16, int64_t{8} << 30}).message()),
              HasSubstr("limit of 128 per model"));
}

TEST(ModelConfigLoaderTest, AcceptsValuesAtTheBounds) {
  auto config = ParseAndValidate(R"pb(
    max_batch_size: 65536
    input [ { name: "a" data_type: TYPE_FP32 dims: [ 2147483647 ] } ]
    dynamic_batching {
      priority_levels: 256 default_priority_level: 256
      max_queue_delay_microseconds: 3600000000
      default_queue_policy { default_timeout_microseconds: 86400000000 max_queue_size: 16777216 }
    }
    model_warmup [ { name: "w" batch_size: 1 count: 1000
                     inputs { key: "a" value: { data_type: TYPE_FP32 dims: [ 67108864 ] zero_data: true } } } ]
  )pb");
  EXPECT_TRUE(config.ok()) << config.status();
}

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

std::string EnsembleText(const std::string& steps, const std::string& extra = "") {
  return R"pb(name: "ens" platform: "ensemble"
    input [{ name: "X" data_type: TYPE_FP32 dims: [4] }]
    output [{ name: "Y" data_type: TYPE_FP32 dims: [4] }] )pb" +
         extra + " ensemble_scheduling { step [ " + steps + " ] }";
}

constexpr char kOneStep[] =
    R"pb({ model_name: "m" model_version: -1 input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "Y" } })pb";

TEST(ModelConfigLoaderTest, EnsembleShapeIsValidated) {
  EXPECT_TRUE(ParseAndValidate(EnsembleText(kOneStep), "ens").ok());
  auto field = [](const std::string& text) { return Message(ParseAndValidate(text, "ens")); };
  EXPECT_THAT(field(R"pb(name: "ens" platform: "ensemble")pb"), HasSubstr("an ensemble needs at least one step"));
  EXPECT_THAT(field(EnsembleText(R"pb({ model_name: "" output_map { key: "O" value: "Y" } })pb")),
              HasSubstr("step[0]: model_name is empty"));
  EXPECT_THAT(field(EnsembleText(R"pb({ model_name: "ens" output_map { key: "O" value: "Y" } })pb")),
              HasSubstr("is the ensemble itself"));
  EXPECT_THAT(field(EnsembleText(R"pb({ model_name: "m" input_map { key: "I" value: "X" } })pb")),
              HasSubstr("step[0]: output_map is empty"));
  EXPECT_THAT(field(EnsembleText(R"pb({ model_name: "m" model_version: -2 output_map { key: "O" value: "Y" } })pb")),
              HasSubstr("model_version -2 must be -1 (newest)"));
  EXPECT_THAT(field(EnsembleText(R"pb({ model_name: "m" model_namespace: "ns" output_map { key: "O" value: "Y" } })pb")),
              HasSubstr("model_namespace is not supported"));
  EXPECT_THAT(field(EnsembleText(R"pb({ model_name: "m" output_map { key: "O" value: "" } })pb")),
              HasSubstr("tensor name must be 1 to 256 characters"));
  EXPECT_THAT(Message(ParseAndValidate(StrCat(kSimple, R"pb( ensemble_scheduling { step [ { model_name: "m" } ] })pb"))),
              HasSubstr("ensemble_scheduling: needs platform: \"ensemble\""));
  EXPECT_THAT(field(EnsembleText(kOneStep, R"pb(model_warmup [{ name: "w" batch_size: 1 }])pb")),
              HasSubstr("an ensemble has no warmup"));
}

TEST(ModelConfigLoaderTest, EnsembleStepCountIsBounded) {
  std::string steps;
  for (int i = 0; i < 10000; ++i) {
    steps += StrCat(i ? ", " : "", R"pb({ model_name: "m" output_map { key: "OUT" value: "t)pb", i, R"pb(" } })pb");
  }
  EXPECT_THAT(Message(ParseAndValidate(EnsembleText(steps), "ens")),
              HasSubstr("ensemble_scheduling.step: 10000 steps is more than the limit of 256"));
}

// The response cache (docs/response_cache.md): accepted, except with a decoupled
// transaction policy or a sequence batcher, which Triton refuses with these words.
TEST(ModelConfigLoaderTest, ResponseCacheIsRefusedOnlyForDecoupledAndSequenceModels) {
  auto cached = ParseAndValidate(std::string(kSimple) + "response_cache { enable: true }");
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_TRUE(cached->response_cache().enable());
  auto decoupled = ParseAndValidate(std::string(kSimple) +
                                    "response_cache { enable: true } model_transaction_policy { decoupled: true }");
  EXPECT_EQ(decoupled.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(decoupled), HasSubstr("response_cache.enable"));
  EXPECT_THAT(Message(decoupled), HasSubstr("Response Cache does not currently support model simple with "
                                            "'decoupled' transaction policy. Please disable the response cache."));
  EXPECT_TRUE(ParseAndValidate(std::string(kSimple) + "model_transaction_policy { decoupled: true }").ok());
  auto stateful = ParseAndValidate(std::string(kSimple) + "response_cache { enable: true } sequence_batching { }");
  EXPECT_EQ(stateful.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(stateful), HasSubstr("Response Cache does not currently support model simple with "
                                           "sequence batching scheduler. Please disable the response cache."));
}

}  // namespace
}  // namespace infera
