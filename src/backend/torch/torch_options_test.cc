#include "backend/torch/torch_options.h"

#include <google/protobuf/text_format.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace infera
