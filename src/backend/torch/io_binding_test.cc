#include "backend/torch/io_binding.h"

#include <google/protobuf/text_format.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  return config;
}

std::vector<ForwardArgument> Args(std::initializer_list<const char*> names) {
  std::vector<ForwardArgument> args;
  for (const char* name : names) args.push_back({name, false, true});
  return args;
}

TEST(IndexSuffixTest, ParsesTritonNames) {
  EXPECT_EQ(IndexSuffix("INPUT__0"), 0);
  EXPECT_EQ(IndexSuffix("x__12"), 12);
  EXPECT_EQ(IndexSuffix("a__b__3"), 3);
  EXPECT_EQ(IndexSuffix("INPUT0"), std::nullopt);
  EXPECT_EQ(IndexSuffix("INPUT__"), std::nullopt);
  EXPECT_EQ(IndexSuffix("INPUT__-1"), std::nullopt);
  EXPECT_EQ(IndexSuffix("INPUT__1a"), std::nullopt);
  EXPECT_EQ(IndexSuffix("INPUT_1"), std::nullopt);
}

TEST(BindInputsTest, ByIndexIgnoresConfigOrder) {
  auto binding = BindInputs(Config(R"(input { name: "IN__1" } input { name: "IN__0" })"),
                            Args({"a", "b"}));
  ASSERT_TRUE(binding.ok()) << binding.status();
  EXPECT_TRUE(binding->by_index);
  EXPECT_THAT(binding->position, ElementsAre(1, 0));
}

TEST(BindInputsTest, ByName) {
  auto binding = BindInputs(Config(R"(input { name: "y" } input { name: "x" })"),
                            Args({"x", "y"}));
  ASSERT_TRUE(binding.ok()) << binding.status();
  EXPECT_FALSE(binding->by_index);
  EXPECT_THAT(binding->position, ElementsAre(1, 0));
}

TEST(BindInputsTest, MixedNamesFallBackToNames) {
  auto binding = BindInputs(Config(R"(input { name: "INPUT__0" } input { name: "y" })"),
                            Args({"x", "y"}));
  ASSERT_FALSE(binding.ok());
  EXPECT_THAT(binding.status().message(), HasSubstr("input 'INPUT__0' matches no argument"));
  EXPECT_THAT(binding.status().message(), HasSubstr("(x, y)"));
}

TEST(BindInputsTest, IndexPastLastArgumentNamesInput) {
  auto binding = BindInputs(Config(R"(input { name: "IN__0" } input { name: "IN__2" })"),
                            Args({"x", "y"}));
  ASSERT_FALSE(binding.ok());
  EXPECT_THAT(binding.status().message(), HasSubstr("input 'IN__2': index 2"));
}

TEST(BindInputsTest, DuplicateIndexNamesBothInputs) {
  auto binding = BindInputs(Config(R"(input { name: "A__0" } input { name: "B__0" })"),
                            Args({"x", "y"}));
  ASSERT_FALSE(binding.ok());
  EXPECT_THAT(binding.status().message(), HasSubstr("'B__0' and input 'A__0'"));
}

TEST(BindInputsTest, UnfedArgumentWithoutDefaultIsAnError) {
  auto binding = BindInputs(Config(R"(input { name: "x" })"), Args({"x", "y"}));
  ASSERT_FALSE(binding.ok());
  EXPECT_THAT(binding.status().message(), HasSubstr("forward() argument 'y' (position 1)"));

  std::vector<ForwardArgument> with_default = Args({"x", "y"});
  with_default[1].has_default = true;
  EXPECT_TRUE(BindInputs(Config(R"(input { name: "x" })"), with_default).ok());
}

TEST(BindInputsTest, NonTensorArgumentIsAnError) {
  std::vector<ForwardArgument> args = Args({"x", "k"});
  args[1].accepts_tensor = false;
  auto binding = BindInputs(Config(R"(input { name: "x" } input { name: "k" })"), args);
  ASSERT_FALSE(binding.ok());
  EXPECT_THAT(binding.status().message(), HasSubstr("'k', which does not take a Tensor"));
}

TEST(BindOutputsTest, ByIndexAllowsSubsets) {
  inference::ModelConfig config = Config(R"(output { name: "OUT__2" } output { name: "OUT__0" })");
  auto binding = BindOutputs(config);
  ASSERT_TRUE(binding.ok()) << binding.status();
  EXPECT_THAT(binding->index, ElementsAre(2, 0));
  EXPECT_TRUE(CheckReturnedCount(*binding, config, 3).ok());
  absl::Status short_count = CheckReturnedCount(*binding, config, 2);
  EXPECT_EQ(short_count.code(), absl::StatusCode::kInternal);  // the model's fault
  EXPECT_THAT(short_count.message(), HasSubstr("output 'OUT__2': the model returned 2 value"));
}

TEST(BindOutputsTest, ByOrderNeedsExactCount) {
  inference::ModelConfig config = Config(R"(output { name: "a" } output { name: "b" })");
  auto binding = BindOutputs(config);
  ASSERT_TRUE(binding.ok()) << binding.status();
  EXPECT_THAT(binding->index, ElementsAre(0, 1));
  EXPECT_TRUE(CheckReturnedCount(*binding, config, 2).ok());
  EXPECT_THAT(CheckReturnedCount(*binding, config, 1).message(), HasSubstr("output 'b'"));
  EXPECT_THAT(CheckReturnedCount(*binding, config, 3).message(),
              HasSubstr("returned 3 values but the config declares 2 outputs (a, b)"));
  EXPECT_EQ(CheckReturnedCount(*binding, config, 3).code(), absl::StatusCode::kInternal);
}

TEST(BindOutputsTest, DuplicateIndex) {
  auto binding = BindOutputs(Config(R"(output { name: "a__1" } output { name: "b__1" })"));
  ASSERT_FALSE(binding.ok());
  EXPECT_THAT(binding.status().message(), HasSubstr("'b__1' and output 'a__1'"));
}

}  // namespace
}  // namespace infera
