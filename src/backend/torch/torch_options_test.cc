#include "backend/torch/torch_options.h"

#include <google/protobuf/text_format.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/str_cat.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kTensors[] = R"(
  input { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }
  output { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }
)";

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  return config;
}

std::string Parameter(const std::string& key, const std::string& value) {
  return "parameters { key: \"" + key + "\" value: { string_value: \"" + value + "\" } }\n";
}

TEST(TorchOptionsTest, Defaults) {
  auto options = ParseTorchModelOptions(Config(kTensors));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->intra_op_threads, 0);
  EXPECT_TRUE(options->inference_mode);
  EXPECT_FALSE(options->disable_optimized_execution);
  EXPECT_TRUE(options->optimize_for_inference);
  EXPECT_TRUE(options->share_weights);
  EXPECT_EQ(options->model_filename, "model.pt");
}

TEST(TorchOptionsTest, ParsesEveryParameter) {
  auto options = ParseTorchModelOptions(Config(
      std::string(kTensors) + Parameter("INTRA_OP_THREAD_COUNT", "3") +
      Parameter("INFERENCE_MODE", "False") + Parameter("DISABLE_OPTIMIZED_EXECUTION", "yes") +
      Parameter("OPTIMIZE_FOR_INFERENCE", "0") + Parameter("ENABLE_WEIGHT_SHARING", "off") +
      Parameter("ENABLE_NVFUSER", "true") + Parameter("A_KEY", "x") +
      "default_model_filename: \"net.pt\""));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->intra_op_threads, 3);
  EXPECT_FALSE(options->inference_mode);
  EXPECT_TRUE(options->disable_optimized_execution);
  EXPECT_FALSE(options->optimize_for_inference);
  EXPECT_FALSE(options->share_weights);
  EXPECT_EQ(options->model_filename, "net.pt");
  EXPECT_THAT(options->ignored_keys, ElementsAre("A_KEY", "ENABLE_NVFUSER"));
}

TEST(TorchOptionsTest, BadValuesNameTheKey) {
  struct Case {
    const char* key;
    const char* value;
  };
  for (const Case& c : {Case{"INFERENCE_MODE", "maybe"}, Case{"OPTIMIZE_FOR_INFERENCE", ""},
                        Case{"INTRA_OP_THREAD_COUNT", "-1"}, Case{"INTRA_OP_THREAD_COUNT", "2x"},
                        Case{"INTRA_OP_THREAD_COUNT", "100000"}}) {
    absl::Status status =
        ValidateTorchConfig(Config(std::string(kTensors) + Parameter(c.key, c.value)));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.key << "=" << c.value;
    EXPECT_THAT(status.message(), HasSubstr(std::string("'") + c.key + "' has value '" +
                                            c.value + "'"));
  }
}

TEST(TorchOptionsTest, ThreadCountIsBoundedByTheCores) {
  const std::string config = std::string(kTensors) + Parameter("INTRA_OP_THREAD_COUNT", "9");
  // 4 threads per core: 9 is too many on 2 cores, fine on 4.
  absl::Status two = ValidateTorchConfig(Config(config), MachineLimits{2, int64_t{1} << 30});
  EXPECT_EQ(two.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(two.message(), HasSubstr("from 0 to 8"));
  auto four = ParseTorchModelOptions(Config(config), MachineLimits{4, int64_t{1} << 30});
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->intra_op_threads, 9);
}

TEST(TorchOptionsTest, ModelFilenameMustStayInVersionFolder) {
  for (const char* name : {"../model.pt", "/etc/passwd", "..", "a/b.pt"}) {
    absl::Status status = ValidateTorchConfig(
        Config(std::string(kTensors) + "default_model_filename: \"" + name + "\""));
    EXPECT_THAT(status.message(), HasSubstr("default_model_filename")) << name;
  }
}

TEST(TorchOptionsTest, RejectsTypesLibTorchLacks) {
  for (const char* type : {"TYPE_UINT16", "TYPE_UINT32", "TYPE_UINT64", "TYPE_STRING"}) {
    absl::Status status = ValidateTorchConfig(Config(
        std::string("input { name: \"in\" data_type: ") + type + " dims: [1] }\n" +
        "output { name: \"out\" data_type: TYPE_FP32 dims: [1] }"));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << type;
    EXPECT_THAT(status.message(), HasSubstr(std::string("input 'in': ") + type));
  }
  absl::Status status = ValidateTorchConfig(
      Config("input { name: \"in\" data_type: TYPE_FP32 dims: [1] }\n"
             "output { name: \"out\" data_type: TYPE_UINT64 dims: [1] }"));
  EXPECT_THAT(status.message(), HasSubstr("output 'out': TYPE_UINT64 is not supported"));
}

TEST(TorchOptionsTest, AcceptsEveryTorchType) {
  for (const char* type : {"TYPE_BOOL", "TYPE_UINT8", "TYPE_INT8", "TYPE_INT16", "TYPE_INT32",
                           "TYPE_INT64", "TYPE_FP16", "TYPE_BF16", "TYPE_FP32", "TYPE_FP64"}) {
    EXPECT_TRUE(ValidateTorchConfig(
                    Config(std::string("input { name: \"in\" data_type: ") + type +
                           " dims: [1] }\noutput { name: \"out\" data_type: " + type +
                           " dims: [1] }"))
                    .ok())
        << type;
  }
}

TEST(TorchOptionsTest, NeedsInputsAndOutputs) {
  EXPECT_THAT(ValidateTorchConfig(Config("output { name: \"o\" data_type: TYPE_FP32 }")).message(),
              HasSubstr("input: the pytorch backend needs at least one input"));
  EXPECT_THAT(ValidateTorchConfig(Config("input { name: \"i\" data_type: TYPE_FP32 }")).message(),
              HasSubstr("output: the pytorch backend needs at least one output"));
  EXPECT_THAT(
      ValidateTorchConfig(Config("input { name: \"i\" data_type: TYPE_FP32 is_shape_tensor: true }"
                                 "output { name: \"o\" data_type: TYPE_FP32 }"))
          .message(),
      HasSubstr("input 'i': is_shape_tensor"));
}


TEST(TorchOptionsTest, PrecisionParameters) {
  auto defaults = ParseTorchModelOptions(Config(kTensors));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->precision, Precision::kFp32);
  EXPECT_FALSE(defaults->validate_precision);
  EXPECT_DOUBLE_EQ(defaults->min_cosine, 0.99);
  EXPECT_DOUBLE_EQ(defaults->min_top1_agreement, 0.0);
  for (auto [text, precision] : {std::pair{"fp32", Precision::kFp32},
                                 std::pair{"BF16", Precision::kBf16},
                                 std::pair{"fp16", Precision::kFp16},
                                 std::pair{"int8_dynamic", Precision::kInt8Dynamic}}) {
    auto options = ParseTorchModelOptions(Config(std::string(kTensors) + Parameter("PRECISION", text)));
    ASSERT_TRUE(options.ok()) << text;
    EXPECT_EQ(options->precision, precision);
    EXPECT_TRUE(options->ignored_keys.empty());
  }
  auto options = ParseTorchModelOptions(Config(
      std::string(kTensors) + Parameter("VALIDATE_PRECISION", "true") +
      Parameter("PRECISION_MIN_COSINE", "0.5") + Parameter("PRECISION_MIN_TOP1_AGREEMENT", "1")));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->validate_precision);
  EXPECT_DOUBLE_EQ(options->min_cosine, 0.5);
  EXPECT_DOUBLE_EQ(options->min_top1_agreement, 1.0);
  EXPECT_EQ(PrecisionName(Precision::kInt8Dynamic), "int8_dynamic");
}

TEST(TorchOptionsTest, BadPrecisionValuesNameTheKey) {
  const std::string validate = Parameter("VALIDATE_PRECISION", "true");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Parameter("PRECISION", "int4"), "'PRECISION' has value 'int4', expected one of fp32"},
      {Parameter("PRECISION", ""), "'PRECISION' has value ''"},
      {Parameter("VALIDATE_PRECISION", "maybe"), "'VALIDATE_PRECISION' has value 'maybe'"},
      {validate + Parameter("PRECISION_MIN_COSINE", "1.5"), "'PRECISION_MIN_COSINE' has value '1.5', expected a number from 0 to 1"},
      {validate + Parameter("PRECISION_MIN_COSINE", "-0.1"), "'PRECISION_MIN_COSINE' has value '-0.1'"},
      {validate + Parameter("PRECISION_MIN_COSINE", "nan"), "'PRECISION_MIN_COSINE' has value 'nan'"},
      {validate + Parameter("PRECISION_MIN_COSINE", "0.9x"), "'PRECISION_MIN_COSINE' has value '0.9x'"},
      {validate + Parameter("PRECISION_MIN_TOP1_AGREEMENT", ""), "'PRECISION_MIN_TOP1_AGREEMENT' has value ''"},
      {validate + Parameter("PRECISION_MIN_TOP1_AGREEMENT", "2"), "'PRECISION_MIN_TOP1_AGREEMENT' has value '2'"},
      {Parameter("PRECISION_MIN_COSINE", "0.9"), "'PRECISION_MIN_COSINE' is set but 'VALIDATE_PRECISION' is not true"},
      {Parameter("PRECISION_MIN_TOP1_AGREEMENT", "0.9"), "'PRECISION_MIN_TOP1_AGREEMENT' is set but"},
  };
  for (const auto& [parameters, message] : cases) {
    const absl::Status status = ValidateTorchConfig(Config(std::string(kTensors) + parameters));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << parameters;
    EXPECT_THAT(status.message(), HasSubstr(message)) << parameters;
  }
}

TEST(TorchOptionsTest, GraphExecutorParameter) {
  auto defaults = ParseTorchModelOptions(Config(kTensors));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->graph_executor, GraphExecutor::kAuto);
  for (auto [text, executor] : {std::pair{"auto", GraphExecutor::kAuto},
                                std::pair{"Simple", GraphExecutor::kSimple},
                                std::pair{"PROFILING", GraphExecutor::kProfiling}}) {
    auto options =
        ParseTorchModelOptions(Config(std::string(kTensors) + Parameter("GRAPH_EXECUTOR", text)));
    ASSERT_TRUE(options.ok()) << text;
    EXPECT_EQ(options->graph_executor, executor) << text;
    EXPECT_TRUE(options->ignored_keys.empty());
  }
  EXPECT_EQ(GraphExecutorName(GraphExecutor::kSimple), "simple");
  for (const char* bad : {"", "legacy", "simple ", "1", "auto,simple"}) {
    const absl::Status status =
        ValidateTorchConfig(Config(std::string(kTensors) + Parameter("GRAPH_EXECUTOR", bad)));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(),
                HasSubstr(StrCat("'GRAPH_EXECUTOR' has value '", bad,
                                 "', expected one of auto, simple, profiling")));
  }
}

}  // namespace
}  // namespace infera
