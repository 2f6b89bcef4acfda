#include <cmath>
#include <limits>
#include <tuple>

#include "backend/processing/postprocess_test_util.h"
#include "backend/processing/processing_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using testing::Fp32;
using ::testing::HasSubstr;
using testing::Int64;
using testing::ParseConfig;
using testing::RunOnce;
using testing::Values;

std::string Config(const std::string& l, int d, const std::string& extra = "", bool mask = true,
                   int max_batch = 0) {
  std::string text = "backend: \"pool\" max_batch_size: " + std::to_string(max_batch) +
                     " input { name: \"token_embeddings\" data_type: TYPE_FP32 dims: [" + l + ", " +
                     std::to_string(d) + "] }";
  if (mask) {
    text += " input { name: \"attention_mask\" data_type: TYPE_INT64 dims: [" + l +
            "] optional: true }";
  }
  return text + " output { name: \"embedding\" data_type: TYPE_FP32 dims: [" + std::to_string(d) +
         "] } " + extra;
}

std::string Param(const std::string& key, const std::string& value) {
  return "parameters { key: \"" + key + "\" value { string_value: \"" + value + "\" } }";
}

absl::StatusOr<std::vector<float>> Pool(const std::string& config_text,
                                        std::vector<Tensor> inputs) {
  auto backend = CreatePoolBackend();
  const auto config = ParseConfig(config_text);
  ASSIGN_OR_RETURN(std::vector<Tensor> out, RunOnce(*backend, config, std::move(inputs)));
  return Values<float>(out[0]);
}

std::vector<Tensor> Inputs(Shape shape, std::vector<float> e, std::optional<Shape> mask_shape = {},
                           std::vector<int64_t> mask = {}) {
  std::vector<Tensor> inputs;
  inputs.push_back(Fp32("token_embeddings", shape, e));
  if (mask_shape) inputs.push_back(Int64("attention_mask", *mask_shape, mask));
  return inputs;
}

TEST(PoolBackendTest, MaskedMeanWithoutNormalisation) {
  auto out = Pool(Config("3", 2, Param("normalize", "false")),
                  Inputs({3, 2}, {1, 2, 3, 4, 100, 100}, Shape{3}, {1, 1, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, ElementsAre(2, 3));
  // No mask given (the input is optional): every token counts.
  out = Pool(Config("3", 2, Param("normalize", "false")), Inputs({3, 2}, {1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(*out, ElementsAre(3, 4));
}

TEST(PoolBackendTest, MeanIsL2NormalisedByDefault) {
  auto out = Pool(Config("2", 2), Inputs({2, 2}, {3, 0, 3, 8}, Shape{2}, {1, 1}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(*out, ElementsAre(FloatNear(0.6f, 1e-7), FloatNear(0.8f, 1e-7)));
}

TEST(PoolBackendTest, AllZeroMaskAndZeroVectorStayZero) {
  auto out = Pool(Config("2", 2), Inputs({2, 2}, {1, 2, 3, 4}, Shape{2}, {0, 0}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(*out, ElementsAre(0, 0));
  out = Pool(Config("2", 2), Inputs({2, 2}, {0, 0, 0, 0}, Shape{2}, {1, 1}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(*out, ElementsAre(0, 0));
}

TEST(PoolBackendTest, ClsTakesTheFirstTokenIgnoringTheMask) {
  auto out = Pool(Config("2", 2, Param("mode", "cls") + Param("normalize", "false")),
                  Inputs({2, 2}, {5, 6, 7, 8}, Shape{2}, {0, 1}));
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(*out, ElementsAre(5, 6));
}

TEST(PoolBackendTest, VariableLengthAndBatch) {
  auto out = Pool(
      Config("-1", 2, Param("normalize", "false"), true, 4),
      Inputs({2, 3, 2}, {1, 1, 3, 3, 9, 9, 2, 2, 4, 4, 6, 6}, Shape{2, 3}, {1, 1, 0, 1, 1, 1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, ElementsAre(2, 2, 4, 4));
  // Zero tokens: zero vector.
  out = Pool(Config("-1", 2, "", true), Inputs({0, 2}, {}, Shape{0}, {}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, ElementsAre(0, 0));
}

TEST(PoolBackendTest, Int32AndBoolMasks) {
  for (const auto& [type, dtype, size] : {std::tuple{"TYPE_INT32", DataType::kInt32, 4},
                                          std::tuple{"TYPE_BOOL", DataType::kBool, 1}}) {
    auto backend = CreatePoolBackend();
    const auto config = ParseConfig(
        "backend: \"pool\" input { name: \"token_embeddings\" data_type: TYPE_FP32 dims: [3, 1] }"
        " input { name: \"attention_mask\" data_type: " +
        std::string(type) +
        " dims: [3] }"
        " output { name: \"embedding\" data_type: TYPE_FP32 dims: [1] }" +
        Param("normalize", "false"));
    std::vector<uint8_t> mask(3 * size, 0);
    mask[0] = mask[2 * size] = 1;  // tokens 0 and 2
    std::vector<Tensor> inputs;
    inputs.push_back(Fp32("token_embeddings", {3, 1}, {2, 100, 4}));
    inputs.push_back(testing::MakeTensor<uint8_t>("attention_mask", dtype, {3}, mask));
    auto out = RunOnce(*backend, config, std::move(inputs));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3)) << type;
  }
}

TEST(PoolBackendTest, NonFiniteValuesPropagate) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = Pool(Config("2", 2), Inputs({2, 2}, {nan, 1, 1, 1}, Shape{2}, {1, 1}));
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(std::isnan((*out)[0]));
}

TEST(PoolBackendTest, BadMaskIsInvalidArgument) {
  auto out = Pool(Config("2", 2), Inputs({2, 2}, {1, 2, 3, 4}, Shape{2}, {1, 2}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("attention_mask[1] is 2"));
  out = Pool(Config("-1", 2), Inputs({2, 2}, {1, 2, 3, 4}, Shape{3}, {1, 1, 1}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("needs [2]"));
}

TEST(PoolBackendTest, ConfigErrorsNameTheProblem) {
  auto backend = CreatePoolBackend();
  auto check = [&](const std::string& text, const std::string& needle) {
    absl::Status status = backend->ValidateConfig(ParseConfig(text));
    EXPECT_FALSE(status.ok()) << text;
    EXPECT_THAT(status.message(), HasSubstr(needle)) << text;
  };
  check(Config("4", 2, Param("mode", "max")), "must be one of mean, cls");
  check(Config("4", 2, Param("normalize", "1")), "parameters[normalize] '1'");
  check(
      "backend: \"pool\" input { name: \"x\" data_type: TYPE_FP32 dims: [4, 2] }"
      " output { name: \"embedding\" data_type: TYPE_FP32 dims: [2] }",
      "inputs must be 'token_embeddings'");
  check(
      "backend: \"pool\" input { name: \"token_embeddings\" data_type: TYPE_FP32 dims: [4, 2] }"
      " output { name: \"embedding\" data_type: TYPE_FP32 dims: [3] }",
      "output 'embedding' has dims [3]");
  check(
      "backend: \"pool\" input { name: \"token_embeddings\" data_type: TYPE_FP32 dims: [4, 2] }"
      " input { name: \"attention_mask\" data_type: TYPE_INT64 dims: [5] }"
      " output { name: \"embedding\" data_type: TYPE_FP32 dims: [2] }",
      "input 'attention_mask' has dims [5]");
  check(
      "backend: \"pool\" input { name: \"token_embeddings\" data_type: TYPE_FP16 dims: [4, 2] }"
      " output { name: \"embedding\" data_type: TYPE_FP32 dims: [2] }",
      "is TYPE_FP16; must be TYPE_FP32");
}

}  // namespace
}  // namespace infera
