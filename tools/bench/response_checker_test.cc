#include "tools/bench/response_checker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

template <typename T>
Tensor Make(std::string name, DataType dtype, std::vector<T> values, Shape shape) {
  return Tensor{std::move(name), dtype, std::move(shape), Buffer::Copy(values.data(), values.size() * sizeof(T))};
}

const std::vector<TensorSpec> kOutputs = {{"OUTPUT0", DataType::kInt32, {-1, 2}},
                                          {"OUTPUT1", DataType::kInt32, {-1, 2}}};

TEST(ResponseCheckerTest, AddSubReferenceWrapsLikeTheBackend) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  std::vector<Tensor> inputs = {Make<int32_t>("INPUT0", DataType::kInt32, {5, max}, {1, 2}),
                                Make<int32_t>("INPUT1", DataType::kInt32, {3, 1}, {1, 2})};
  auto expected = BuiltinReferenceOutputs("add_sub", kOutputs, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(expected->size(), 2u);
  int32_t sum[2], diff[2];
  std::memcpy(sum, (*expected)[0].data.data(), 8);
  std::memcpy(diff, (*expected)[1].data.data(), 8);
  EXPECT_EQ(sum[0], 8);
  EXPECT_EQ(sum[1], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(diff[0], 2);
  EXPECT_EQ((*expected)[0].name, "OUTPUT0");
  EXPECT_EQ((*expected)[1].shape, (Shape{1, 2}));
}

TEST(ResponseCheckerTest, IdentityAndUnknownPlatforms) {
  std::vector<Tensor> inputs = {Make<float>("INPUT0", DataType::kFp32, {1.5f, 2.5f}, {2})};
  auto expected = BuiltinReferenceOutputs("identity", {{"OUTPUT0", DataType::kFp32, {-1}}}, inputs);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ((*expected)[0].name, "OUTPUT0");
  EXPECT_EQ((*expected)[0].data.AsStringView(), inputs[0].data.AsStringView());
  auto none = BuiltinReferenceOutputs("pytorch_libtorch", kOutputs, inputs);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("validation_data"));
}

TEST(ResponseCheckerTest, ComparesExactlyAndNamesTheFirstDifference) {
  std::vector<Tensor> expected = {Make<int32_t>("OUTPUT0", DataType::kInt32, {1, 2, 3}, {3})};
  EXPECT_TRUE(CompareOutputs(expected, {Make<int32_t>("OUTPUT0", DataType::kInt32, {1, 2, 3}, {3})}).ok());
  auto wrong = CompareOutputs(expected, {Make<int32_t>("OUTPUT0", DataType::kInt32, {1, 7, 3}, {3})});
  EXPECT_THAT(std::string(wrong.message()), HasSubstr("OUTPUT0[1] is 7, expected 2"));
  EXPECT_THAT(std::string(CompareOutputs(expected, {}).message()), HasSubstr("missing"));
  EXPECT_THAT(std::string(CompareOutputs(expected, {Make<int32_t>("OUTPUT0", DataType::kInt32, {1, 2, 3}, {1, 3})})
                              .message()),
              HasSubstr("shape"));
  EXPECT_THAT(std::string(CompareOutputs(expected, {Make<int64_t>("OUTPUT0", DataType::kInt64, {1, 2, 3}, {3})})
                              .message()),
              HasSubstr("INT64"));
}

TEST(ResponseCheckerTest, FloatsWithinToleranceAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Tensor> expected = {Make<float>("y", DataType::kFp32, {1.0f, nan, 100.0f}, {3})};
  EXPECT_TRUE(CompareOutputs(expected, {Make<float>("y", DataType::kFp32, {1.000001f, nan, 100.0005f}, {3})}).ok());
  EXPECT_FALSE(CompareOutputs(expected, {Make<float>("y", DataType::kFp32, {1.1f, nan, 100.0f}, {3})}).ok());
  EXPECT_FALSE(CompareOutputs(expected, {Make<float>("y", DataType::kFp32, {1.0f, 0.0f, 100.0f}, {3})}).ok());
}

TEST(ResponseCheckerTest, UnknownShapeComparesCountOnly) {
  std::vector<Tensor> expected = {Make<int32_t>("y", DataType::kInt32, {1, 2}, {-1})};
  EXPECT_TRUE(CompareOutputs(expected, {Make<int32_t>("y", DataType::kInt32, {1, 2}, {1, 2})}).ok());
}

}  // namespace
}  // namespace infera::bench
