#include "manager/request_validator.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

const inference::ModelConfig& BatchedConfig() {
  static const inference::ModelConfig config = Config(R"pb(
    name: "m" max_batch_size: 4
    input [ { name: "A" data_type: TYPE_FP32 dims: [ 2, -1 ] },
            { name: "B" data_type: TYPE_INT64 dims: [ 3 ] },
            { name: "C" data_type: TYPE_FP32 dims: [ 4 ] optional: true reshape: { shape: [ 2, 2 ] } } ]
    output [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] }, { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
  )pb");
  return config;
}

Tensor Zeros(const std::string& name, DataType dtype, Shape shape) {
  const int64_t n = *ElementCount(shape);
  std::string bytes(n * DataTypeByteSize(dtype), '\0');
  return Tensor{name, dtype, std::move(shape), Buffer::FromString(std::move(bytes))};
}

InferRequest GoodRequest() {
  InferRequest r;
  r.inputs.push_back(Zeros("B", DataType::kInt64, {2, 3}));
  r.inputs.push_back(Zeros("A", DataType::kFp32, {2, 2, 5}));
  return r;
}

std::string ErrorOf(InferRequest request, const inference::ModelConfig& config = BatchedConfig()) {
  auto result = PrepareRequest(config, request);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST(RequestValidatorTest, ReordersIntoConfigOrderAndReturnsBatchSize) {
  InferRequest r = GoodRequest();
  auto rows = PrepareRequest(BatchedConfig(), r);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, 2);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].name, "A");
  EXPECT_EQ(r.inputs[1].name, "B");
}

TEST(RequestValidatorTest, ReordersInPlaceMovingTheTensorsAroundAnOptionalGap) {
  const inference::ModelConfig config = Config(R"pb(
    name: "m" max_batch_size: 0
    input [ { name: "P" data_type: TYPE_INT32 dims: [ 1 ] },
            { name: "Q" data_type: TYPE_INT32 dims: [ 1 ] optional: true },
            { name: "R" data_type: TYPE_INT32 dims: [ 2 ] },
            { name: "S" data_type: TYPE_INT32 dims: [ 3 ] } ]
    output [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
  )pb");
  InferRequest r;
  r.inputs.push_back(Zeros("S", DataType::kInt32, {3}));
  r.inputs.push_back(Zeros("R", DataType::kInt32, {2}));
  r.inputs.push_back(Zeros("P", DataType::kInt32, {1}));
  const uint8_t* s_data = r.inputs[0].data.data();
  const uint8_t* r_data = r.inputs[1].data.data();
  const uint8_t* p_data = r.inputs[2].data.data();
  ASSERT_TRUE(PrepareRequest(config, r).ok());
  ASSERT_EQ(r.inputs.size(), 3u);
  EXPECT_EQ(r.inputs[0].name, "P");
  EXPECT_EQ(r.inputs[1].name, "R");
  EXPECT_EQ(r.inputs[2].name, "S");
  // Moved, not copied: each tensor still holds its own bytes and shape.
  EXPECT_EQ(r.inputs[0].data.data(), p_data);
  EXPECT_EQ(r.inputs[1].data.data(), r_data);
  EXPECT_EQ(r.inputs[2].data.data(), s_data);
  EXPECT_EQ(r.inputs[2].shape, (Shape{3}));
}

TEST(RequestValidatorTest, AppliesReshapeKeepingBatchDimension) {
  InferRequest r = GoodRequest();
  r.inputs.push_back(Zeros("C", DataType::kFp32, {2, 4}));
  ASSERT_TRUE(PrepareRequest(BatchedConfig(), r).ok());
  EXPECT_EQ(r.inputs[2].shape, (Shape{2, 2, 2}));
}

TEST(RequestValidatorTest, RejectsEveryViolationWithAClearMessage) {
  InferRequest r = GoodRequest();
  r.inputs.erase(r.inputs.begin());
  EXPECT_THAT(ErrorOf(r), HasSubstr("missing input 'B'"));

  r = GoodRequest();
  r.inputs.push_back(Zeros("Z", DataType::kFp32, {1}));
  EXPECT_THAT(ErrorOf(r), HasSubstr("has no input 'Z'"));

  r = GoodRequest();
  r.inputs.push_back(Zeros("A", DataType::kFp32, {2, 2, 5}));
  EXPECT_THAT(ErrorOf(r), HasSubstr("input 'A' already exists in request"));

  r = GoodRequest();
  r.inputs[1] = Zeros("A", DataType::kFp64, {2, 2, 5});
  EXPECT_THAT(ErrorOf(r), HasSubstr("datatype FP64 does not match the model's FP32"));

  r = GoodRequest();
  r.inputs[1] = Zeros("A", DataType::kFp32, {2, 5});
  EXPECT_THAT(ErrorOf(r), HasSubstr("has rank 2 but the model expects [-1,2,-1]"));

  r = GoodRequest();
  r.inputs[1] = Zeros("A", DataType::kFp32, {2, 3, 5});
  EXPECT_THAT(ErrorOf(r), HasSubstr("at dimension 1"));

  r = GoodRequest();
  r.inputs[0] = Zeros("B", DataType::kInt64, {5, 3});
  r.inputs[1] = Zeros("A", DataType::kFp32, {5, 2, 1});
  EXPECT_THAT(ErrorOf(r), HasSubstr("batch size 5 is outside [1, max_batch_size=4]"));

  r = GoodRequest();
  r.inputs[0] = Zeros("B", DataType::kInt64, {1, 3});
  EXPECT_THAT(ErrorOf(r), HasSubstr("differs from the other inputs'"));

  r = GoodRequest();
  r.inputs[0].data = Buffer::FromString(std::string(7, '\0'));
  EXPECT_THAT(ErrorOf(r), HasSubstr("bytes of data"));

  r = GoodRequest();
  r.outputs.push_back({"NOPE", {}});
  EXPECT_THAT(ErrorOf(r), HasSubstr("has no output 'NOPE'"));

  r = GoodRequest();
  r.outputs = {{"X", {}}, {"X", {}}};
  EXPECT_THAT(ErrorOf(r), HasSubstr("already exists in request"));

  EXPECT_THAT(ErrorOf(InferRequest{}), HasSubstr("no inputs"));
}

TEST(RequestValidatorTest, NonBatchingModelTakesExactShape) {
  const auto config = Config(R"pb(name: "n" max_batch_size: 0
      input [ { name: "I" data_type: TYPE_STRING dims: [ -1 ] } ]
      output [ { name: "O" data_type: TYPE_STRING dims: [ -1 ] } ])pb");
  std::string bytes;
  AppendBytesElement(bytes, "a");
  AppendBytesElement(bytes, "bc");
  InferRequest r;
  r.inputs.push_back(Tensor{"I", DataType::kBytes, {2}, Buffer::FromString(std::move(bytes))});
  auto rows = PrepareRequest(config, r);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, 1);
  InferRequest bad;
  bad.inputs.push_back(Tensor{"I", DataType::kBytes, {3}, Buffer::FromString(std::string(4, '\0'))});
  EXPECT_THAT(ErrorOf(bad, config), HasSubstr("BYTES elements"));
}

TEST(RequestValidatorTest, ReshapeTo) {
  google::protobuf::RepeatedField<int64_t> target;
  target.Add(-1);
  target.Add(4);
  EXPECT_EQ(*ReshapeTo({2, 8}, target), (Shape{4, 4}));
  EXPECT_FALSE(ReshapeTo({3, 3}, target).ok());
}

TEST(RequestValidatorTest, ReshapeToATargetTooLargeIsAnErrorNotAnOverflow) {
  google::protobuf::RepeatedField<int64_t> target;
  for (int i = 0; i < 3; ++i) target.Add(int64_t{1} << 31);  // 2^93 elements
  target.Add(-1);
  auto result = ReshapeTo({4}, target);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("too many elements"));
}

TEST(RequestValidatorTest, ChecksRequestedOutputParameters) {
  InferRequest r = GoodRequest();
  r.outputs.push_back(RequestedOutput{"X", {{"classification", int64_t{1}}, {"binary_data", true}}});
  EXPECT_TRUE(PrepareRequest(BatchedConfig(), r).ok());

  r = GoodRequest();
  r.outputs.push_back(RequestedOutput{"Y", {{"top_k", int64_t{1}}}});
  EXPECT_THAT(ErrorOf(r), HasSubstr("output 'Y' has unknown parameter 'top_k'"));

  r = GoodRequest();
  r.outputs.push_back(RequestedOutput{"Y", {{"classification", int64_t{-2}}}});
  EXPECT_THAT(ErrorOf(r), HasSubstr("'classification' must be an integer >= 1"));
}

}  // namespace
}  // namespace infera
