#include "tools/bench/model_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

constexpr char kSimple[] =
    R"({"name":"simple","versions":["1"],"platform":"add_sub",)"
    R"("inputs":[{"name":"INPUT0","datatype":"INT32","shape":[-1,16]},)"
    R"({"name":"INPUT1","datatype":"INT32","shape":[-1,16]}],)"
    R"("outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[-1,16]},)"
    R"({"name":"OUTPUT1","datatype":"INT32","shape":[-1,16]}]})";

constexpr char kIdentity[] =
    R"({"name":"identity_fp32","versions":["1"],"platform":"identity",)"
    R"("inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1]}],)"
    R"("outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1]}]})";

TEST(ModelMetadataTest, ParsesKServeMetadata) {
  auto m = ParseModelMetadata(kSimple);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "simple");
  EXPECT_EQ(m->platform, "add_sub");
  EXPECT_THAT(m->versions, ::testing::ElementsAre("1"));
  ASSERT_EQ(m->inputs.size(), 2u);
  EXPECT_EQ(m->inputs[1].name, "INPUT1");
  EXPECT_EQ(m->inputs[1].dtype, DataType::kInt32);
  EXPECT_EQ(m->inputs[1].shape, (Shape{-1, 16}));
  EXPECT_EQ(m->outputs.size(), 2u);
}

TEST(ModelMetadataTest, RejectsMalformedMetadata) {
  EXPECT_FALSE(ParseModelMetadata("[]").ok());
  EXPECT_FALSE(ParseModelMetadata(R"({"inputs":[]})").ok());
  EXPECT_THAT(std::string(ParseModelMetadata(R"({"inputs":[{"name":"x","datatype":"FP99","shape":[1]}],"outputs":[]})")
                              .status()
                              .message()),
              HasSubstr("FP99"));
}

TEST(ModelMetadataTest, BatchingModelGetsBatchDimension) {
  auto m = ParseModelMetadata(kSimple);
  auto shapes = ResolveInputShapes(*m, {}, 4);
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0].shape, (Shape{4, 16}));
  EXPECT_EQ((*shapes)[1].shape, (Shape{4, 16}));
}

TEST(ModelMetadataTest, MaxBatchSizeFromConfigDecides) {
  auto m = ParseModelMetadata(kSimple);
  m->max_batch_size = 8;
  EXPECT_FALSE(ResolveInputShapes(*m, {}, 9).ok());
  m->max_batch_size = 0;  // [-1, 16] is then a real variable dimension
  EXPECT_THAT(std::string(ResolveInputShapes(*m, {}, 1).status().message()), HasSubstr("--shape INPUT0"));
  EXPECT_EQ(ParseMaxBatchSize(R"({"name":"simple","max_batch_size":8})"), 8);
  EXPECT_EQ(ParseMaxBatchSize(R"({"config":{"max_batch_size":"4"}})"), 4);
  EXPECT_FALSE(ParseMaxBatchSize("{}").has_value());
}

TEST(ModelMetadataTest, VariableDimensionsNeedShape) {
  auto m = ParseModelMetadata(kIdentity);
  // Without config, [-1] reads as a batch dimension with no other dims: a scalar per row.
  std::map<std::string, Shape> overrides;
  ASSERT_TRUE(ParseShapeOverride("INPUT0:32", &overrides).ok());
  EXPECT_FALSE(ModelBatches(*m, overrides));  // full-rank override: not batching
  auto shapes = ResolveInputShapes(*m, overrides, 1);
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0].shape, (Shape{32}));
  EXPECT_THAT(std::string(ResolveInputShapes(*m, overrides, 2).status().message()), HasSubstr("does not batch"));
}

TEST(ModelMetadataTest, OverrideErrors) {
  auto m = ParseModelMetadata(kSimple);
  std::map<std::string, Shape> overrides;
  EXPECT_FALSE(ParseShapeOverride("INPUT0", &overrides).ok());
  EXPECT_FALSE(ParseShapeOverride("INPUT0:a", &overrides).ok());
  EXPECT_FALSE(ParseShapeOverride("INPUT0:0", &overrides).ok());
  ASSERT_TRUE(ParseShapeOverride("NOPE:3", &overrides).ok());
  EXPECT_THAT(std::string(ResolveInputShapes(*m, overrides, 1).status().message()), HasSubstr("no input 'NOPE'"));
  overrides = {{"INPUT0", {8}}};
  EXPECT_THAT(std::string(ResolveInputShapes(*m, overrides, 1).status().message()), HasSubstr("fixed at 16"));
}

}  // namespace
}  // namespace infera::bench
