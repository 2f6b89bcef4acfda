#include <cmath>
#include <fstream>
#include <limits>

#include "backend/processing/postprocess_test_util.h"
#include "backend/processing/processing_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using testing::Fp32;
using ::testing::HasSubstr;
using testing::ParseConfig;
using testing::RunOnce;
using testing::Values;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::string Config(int c, int k, const std::string& extra = "", int max_batch = 0,
                   const std::string& outputs = "scores,indices") {
  std::string text =
      "name: \"top\" backend: \"classify\" max_batch_size: " + std::to_string(max_batch) +
      " input { name: \"logits\" data_type: TYPE_FP32 dims: [" + std::to_string(c) +
      "] } parameters { key: \"top_k\" value { string_value: \"" + std::to_string(k) + "\" } } " +
      extra;
  if (outputs.find("scores") != std::string::npos) {
    text += " output { name: \"scores\" data_type: TYPE_FP32 dims: [" + std::to_string(k) + "] }";
  }
  if (outputs.find("indices") != std::string::npos) {
    text += " output { name: \"indices\" data_type: TYPE_INT64 dims: [" + std::to_string(k) + "] }";
  }
  return text;
}

std::string Param(const std::string& key, const std::string& value) {
  return "parameters { key: \"" + key + "\" value { string_value: \"" + value + "\" } }";
}

absl::StatusOr<std::vector<Tensor>> Classify(const std::string& config_text, Tensor input) {
  auto backend = CreateClassifyBackend();
  const inference::ModelConfig config = ParseConfig(config_text);
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(input));
  return RunOnce(*backend, config, std::move(inputs));
}

TEST(ClassifyBackendTest, TopKRawScoresDescendingTiesByLowerIndex) {
  auto out = Classify(Config(5, 3), Fp32("logits", {5}, {1, 3, 2, 3, -1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 3, 2));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 3, 2));
  EXPECT_EQ((*out)[0].shape, Shape({3}));
}

TEST(ClassifyBackendTest, SoftmaxIsStableForHugeLogits) {
  auto out =
      Classify(Config(3, 3, Param("softmax", "true")), Fp32("logits", {3}, {1000, 999, 1e30f}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1.0f, 0.0f, 0.0f));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(2, 0, 1));

  out = Classify(Config(2, 2, Param("softmax", "true")), Fp32("logits", {2}, {1000, 999}));
  ASSERT_TRUE(out.ok());
  const double e = std::exp(-1.0);
  EXPECT_NEAR(Values<float>((*out)[0])[0], 1 / (1 + e), 1e-7);
  EXPECT_NEAR(Values<float>((*out)[0])[1], e / (1 + e), 1e-7);
}

TEST(ClassifyBackendTest, NanRanksLastWithProbabilityZero) {
  auto out = Classify(Config(3, 3, Param("softmax", "true")), Fp32("logits", {3}, {kNan, 0, 0}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 2, 0));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.5f, 0.5f, 0.0f));
  // Without softmax the NaN value itself is reported, last.
  out = Classify(Config(3, 3), Fp32("logits", {3}, {kNan, -kInf, 1}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(2, 1, 0));
  EXPECT_TRUE(std::isnan(Values<float>((*out)[0])[2]));
}

TEST(ClassifyBackendTest, InfinitiesShareTheMass) {
  auto out =
      Classify(Config(4, 4, Param("softmax", "true")), Fp32("logits", {4}, {kInf, 5, kInf, -kInf}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(0, 2, 1, 3));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.5f, 0.5f, 0.0f, 0.0f));
  out = Classify(Config(2, 2, Param("softmax", "true")), Fp32("logits", {2}, {-kInf, -kInf}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.5f, 0.5f));
  out = Classify(Config(2, 2, Param("softmax", "true")), Fp32("logits", {2}, {kNan, kNan}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.0f, 0.0f));
}

TEST(ClassifyBackendTest, BatchRowsAreIndependent) {
  auto out = Classify(Config(3, 2, "", 4), Fp32("logits", {2, 3}, {0, 1, 2, 5, 4, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].shape, Shape({2, 2}));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(2, 1, 0, 1));
  // An empty batch (0 rows) gives empty outputs.
  out = Classify(Config(3, 2, "", 4), Fp32("logits", {0, 3}, {}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape, Shape({0, 2}));
}

TEST(ClassifyBackendTest, Int64LogitsCompareExactly) {
  auto backend = CreateClassifyBackend();
  const auto config = ParseConfig(
      "backend: \"classify\" input { name: \"x\" data_type: TYPE_INT64 dims: [2] } "
      "output { name: \"indices\" data_type: TYPE_INT64 dims: [2] } " +
      Param("top_k", "2"));
  std::vector<Tensor> inputs;
  inputs.push_back(testing::Int64("x", {2}, {(int64_t{1} << 60), (int64_t{1} << 60) + 1}));
  auto out = RunOnce(*backend, config, std::move(inputs));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(1, 0));
}

TEST(ClassifyBackendTest, Fp16LogitsAreRankedAndNormalised) {
  auto backend = CreateClassifyBackend();
  const auto config = ParseConfig(
      "backend: \"classify\" input { name: \"x\" data_type: TYPE_FP16 dims: [3] } "
      "output { name: \"scores\" data_type: TYPE_FP32 dims: [2] } "
      "output { name: \"indices\" data_type: TYPE_INT64 dims: [2] } " +
      Param("top_k", "2") + Param("softmax", "true"));
  std::vector<Tensor> inputs;
  // FP16 bits of 1.0, 2.0, 0.0.
  inputs.push_back(testing::MakeTensor<uint16_t>("x", DataType::kFp16, {3}, {0x3C00, 0x4000, 0}));
  auto out = RunOnce(*backend, config, std::move(inputs));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 0));
  const double sum = std::exp(-1.0) + std::exp(0.0) + std::exp(-2.0);  // max 2 subtracted
  EXPECT_NEAR(Values<float>((*out)[0])[0], std::exp(0.0) / sum, 1e-7);
  EXPECT_NEAR(Values<float>((*out)[0])[1], std::exp(-1.0) / sum, 1e-7);
}

TEST(ClassifyBackendTest, LabelsFollowTheRanking) {
  const auto dir = std::filesystem::temp_directory_path() / "classify_backend_test_labels";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "labels.txt") << "cat\r\ndog\nbird\n";
  auto backend = CreateClassifyBackend();
  const auto config = ParseConfig(Config(3, 2, Param("labels", "labels.txt"), 0, "scores") +
                                  " output { name: \"labels\" data_type: TYPE_STRING dims: [2] }");
  auto model = testing::LoadModel(*backend, config, dir);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = (*model)->CreateInstance({});
  std::vector<Tensor> inputs;
  inputs.push_back(Fp32("logits", {3}, {0.1f, 0.2f, 0.7f}));
  auto out = (*instance)->Execute(std::move(inputs));
  ASSERT_TRUE(out.ok()) << out.status();
  auto labels = SplitBytesElements((*out)[1].data.AsStringView());
  ASSERT_TRUE(labels.ok());
  EXPECT_THAT(*labels, ElementsAre("bird", "dog"));

  // A label file with the wrong number of lines, or leaving the directory, is a load error.
  std::ofstream(dir / "short.txt") << "cat\ndog\n";
  const auto short_config =
      ParseConfig(Config(3, 2, Param("labels", "short.txt"), 0, "scores") +
                  " output { name: \"labels\" data_type: TYPE_STRING dims: [2] }");
  auto bad = testing::LoadModel(*backend, short_config, dir);
  EXPECT_THAT(bad.status().message(), HasSubstr("has 2 lines; the input has 3 classes"));
  const auto escape_config = ParseConfig(Config(3, 2, Param("labels", "../x.txt")));
  bad = testing::LoadModel(*backend, escape_config, dir);
  EXPECT_THAT(bad.status().message(), HasSubstr("inside the model directory"));
  std::filesystem::remove_all(dir);
}

TEST(ClassifyBackendTest, ConfigErrorsNameTheProblem) {
  auto backend = CreateClassifyBackend();
  auto check = [&](const std::string& text, const std::string& needle) {
    absl::Status status = backend->ValidateConfig(ParseConfig(text));
    EXPECT_FALSE(status.ok()) << text;
    EXPECT_THAT(status.message(), HasSubstr(needle)) << text;
  };
  check(Config(3, 4), "more than the input's 3 classes");
  check(Config(3, 2, Param("softmax", "yes")), "parameters[softmax] 'yes'");
  check(
      "backend: \"classify\" input { name: \"x\" data_type: TYPE_FP32 dims: [3] } "
      "output { name: \"scores\" data_type: TYPE_FP32 dims: [1] }",
      "parameters[top_k] is required");
  check(Config(3, 2) + " output { name: \"labels\" data_type: TYPE_STRING dims: [2] }",
        "needs parameters[labels]");
  check(Config(3, 2) + " output { name: \"extra\" data_type: TYPE_FP32 dims: [2] }",
        "output 'extra' is not one it produces");
  check("backend: \"classify\" input { name: \"x\" data_type: TYPE_FP32 dims: [-1] } " +
            Param("top_k", "1") + " output { name: \"scores\" data_type: TYPE_FP32 dims: [1] }",
        "has dims [-1]");
  check("backend: \"classify\" input { name: \"x\" data_type: TYPE_STRING dims: [3] } " +
            Param("top_k", "1") + " output { name: \"scores\" data_type: TYPE_FP32 dims: [1] }",
        "must be a numeric type");
  check("backend: \"classify\" input { name: \"x\" data_type: TYPE_FP32 dims: [3] } " +
            Param("top_k", "2") + " output { name: \"scores\" data_type: TYPE_FP32 dims: [3] }",
        "output 'scores' has dims [3]");
  check(Config(3, 2, "", 0, ""), "declares no output");
  check("backend: \"classify\" input { name: \"x\" data_type: TYPE_FP32 dims: [3] } " +
            Param("top_k", "0x1") + " output { name: \"scores\" data_type: TYPE_FP32 dims: [1] }",
        "parameters[top_k] '0x1'");
}

TEST(ClassifyBackendTest, WrongShapeAtRuntimeIsInvalidArgument) {
  auto out = Classify(Config(3, 2), Fp32("logits", {4}, {1, 2, 3, 4}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace infera
