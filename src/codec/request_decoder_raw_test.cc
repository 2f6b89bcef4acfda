// DecodeRawInferRequest: Triton's raw binary request (Inference-Header-Content-Length: 0).
#include "codec/request_decoder_raw.h"

#include <cstdint>
#include <string>
#include <vector>

#include "codec/codec_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::Bytes;
using testing_util::BytesValues;
using testing_util::Values;

constexpr size_t kMaxElements = 1 << 20;

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  return config;
}

std::string ErrorOf(std::string body, const std::string& config_text,
                    size_t max_elements = kMaxElements) {
  absl::StatusOr<InferRequest> r =
      DecodeRawInferRequest(std::move(body), Config(config_text), max_elements);
  if (r.ok()) return "<decoded without error>";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

constexpr char kVariableFp32[] = R"(name: "id" max_batch_size: 0
  input { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] })";

TEST(DecodeRawTest, VariableDimensionComesFromTheByteCount) {
  const std::string body = Bytes(std::vector<float>{1.5f, -2.0f, 3.25f});
  auto r = DecodeRawInferRequest(body, Config(kVariableFp32), kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->inputs.size(), 1u);
  EXPECT_EQ(r->inputs[0].name, "INPUT0");
  EXPECT_EQ(r->inputs[0].dtype, DataType::kFp32);
  EXPECT_THAT(r->inputs[0].shape, ElementsAre(3));
  EXPECT_THAT(Values<float>(r->inputs[0]), ElementsAre(1.5f, -2.0f, 3.25f));
  // Every output is answered as binary.
  ASSERT_EQ(r->parameters.count("binary_data_output"), 1u);
  EXPECT_EQ(std::get<bool>(r->parameters.at("binary_data_output")), true);
  EXPECT_TRUE(r->outputs.empty());
}

TEST(DecodeRawTest, BatchingModelGetsBatchOneAndVariableInnerDimension) {
  const std::string config = R"(name: "m" max_batch_size: 8
    input { name: "x" data_type: TYPE_INT32 dims: [ 2, -1 ] })";
  auto r = DecodeRawInferRequest(Bytes(std::vector<int32_t>{1, 2, 3, 4, 5, 6}), Config(config),
                                 kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->inputs[0].shape, ElementsAre(1, 2, 3));
  EXPECT_THAT(Values<int32_t>(r->inputs[0]), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(DecodeRawTest, FixedShapeNeedsExactlyItsBytes) {
  const std::string config = R"(name: "simple1" max_batch_size: 8
    input { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] })";
  auto r = DecodeRawInferRequest(Bytes(std::vector<int32_t>{9, 8, 7, 6}), Config(config),
                                 kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->inputs[0].shape, ElementsAre(1, 4));
  EXPECT_THAT(ErrorOf(Bytes(std::vector<int32_t>{1, 2, 3}), config),
              HasSubstr("INT32 [1,4] needs 16 bytes; the body has 12"));
}

TEST(DecodeRawTest, BytesInputIsOneElementWithoutLengthPrefix) {
  const std::string config = R"(name: "s" max_batch_size: 4
    input { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] })";
  auto r = DecodeRawInferRequest(std::string("hello\0world", 11), Config(config), kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inputs[0].dtype, DataType::kBytes);
  EXPECT_THAT(r->inputs[0].shape, ElementsAre(1, 1));
  EXPECT_THAT(BytesValues(r->inputs[0]), ElementsAre(std::string("hello\0world", 11)));
  // An empty body is one empty element.
  r = DecodeRawInferRequest("", Config(config), kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(BytesValues(r->inputs[0]), ElementsAre(""));
}

TEST(DecodeRawTest, BytesInputNeedsDimsOne) {
  EXPECT_THAT(ErrorOf("abc", R"(name: "s" input { name: "T" data_type: TYPE_STRING dims: [ -1 ] })"),
              HasSubstr("the model must have input shape [1]"));
  EXPECT_THAT(ErrorOf("abc", R"(name: "s" input { name: "T" data_type: TYPE_STRING dims: [ 2 ] })"),
              HasSubstr("For BYTE datatype raw input 'T', the model must have input shape [1] (it has dims [2]"));
}

TEST(DecodeRawTest, ModelMustHaveExactlyOneInput) {
  const std::string two = R"(name: "simple" max_batch_size: 8
    input { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }
    input { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] })";
  EXPECT_THAT(ErrorOf(std::string(64, '\0'), two),
              HasSubstr("model 'simple': Raw request must only have 1 input (found 1) to be deduced but got 2 inputs"));
  EXPECT_THAT(ErrorOf("", R"(name: "none")"), HasSubstr("to be deduced but got 0 inputs"));
}

TEST(DecodeRawTest, AtMostOneVariableDimension) {
  EXPECT_THAT(ErrorOf(std::string(16, '\0'),
                      R"(name: "m" input { name: "x" data_type: TYPE_FP32 dims: [ -1, -1 ] })"),
              HasSubstr("more than one variable-sized dimension"));
}

TEST(DecodeRawTest, ByteCountMustBeWholeElements) {
  EXPECT_THAT(ErrorOf(std::string(7, '\0'), kVariableFp32),
              HasSubstr("body of 7 bytes is not a whole number of FP32 elements (4 bytes each)"));
  // Whole elements but not a whole number of rows of the fixed dimensions.
  EXPECT_THAT(ErrorOf(Bytes(std::vector<float>{1, 2, 3}),
                      R"(name: "m" input { name: "x" data_type: TYPE_FP32 dims: [ -1, 2 ] })"),
              HasSubstr("does not fill input 'x' dims [-1,2] (a multiple of 2 elements)"));
}

TEST(DecodeRawTest, ZeroSizedFixedDimension) {
  const std::string config = R"(name: "m" input { name: "x" data_type: TYPE_FP32 dims: [ 0, -1 ] })";
  auto r = DecodeRawInferRequest("", Config(config), kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->inputs[0].shape, ElementsAre(0, 0));
  EXPECT_THAT(ErrorOf(std::string(4, '\0'), config), HasSubstr("does not fill input 'x'"));
}

TEST(DecodeRawTest, ElementLimitApplies) {
  EXPECT_THAT(ErrorOf(std::string(40, '\0'), kVariableFp32, /*max_elements=*/8),
              HasSubstr("has 10 elements, more than the limit of 8"));
}

TEST(DecodeRawTest, HugeDimsDoNotOverflow) {
  EXPECT_THAT(
      ErrorOf(std::string(8, '\0'),
              R"(name: "m" input { name: "x" data_type: TYPE_FP32 dims: [ 4611686018427387904, 4 ] })"),
      HasSubstr("dims are too large"));
}

}  // namespace
}  // namespace infera
