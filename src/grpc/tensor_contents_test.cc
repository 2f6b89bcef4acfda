#include "grpc/tensor_contents.h"

#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using inference::InferTensorContents;

template <typename T>
Tensor Make(DataType type, std::vector<T> values) {
  return Tensor{"t", type, {static_cast<int64_t>(values.size())},
                Buffer::Copy(values.data(), values.size() * sizeof(T))};
}

// Encode then decode: the bytes come back unchanged.
void ExpectRoundTrip(const Tensor& tensor, std::string_view field) {
  SCOPED_TRACE(DataTypeName(tensor.dtype));
  EXPECT_EQ(TypedContentsField(tensor.dtype), field);
  InferTensorContents contents;
  ASSERT_TRUE(EncodeTypedContents(tensor, &contents).ok());
  auto decoded = DecodeTypedContents(contents, tensor.dtype, tensor.shape[0], "input 't'");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->AsStringView(), tensor.data.AsStringView());
}

TEST(TensorContentsTest, EveryTypedDatatypeRoundTrips) {
  ExpectRoundTrip(Make<uint8_t>(DataType::kBool, {1, 0, 1}), "bool_contents");
  ExpectRoundTrip(Make<int8_t>(DataType::kInt8, {-128, 127, 0}), "int_contents");
  ExpectRoundTrip(Make<int16_t>(DataType::kInt16, {-32768, 32767, 0}), "int_contents");
  ExpectRoundTrip(Make<int32_t>(DataType::kInt32, {INT32_MIN, INT32_MAX, 0}), "int_contents");
  ExpectRoundTrip(Make<int64_t>(DataType::kInt64, {INT64_MIN, INT64_MAX, 0}), "int64_contents");
  ExpectRoundTrip(Make<uint8_t>(DataType::kUint8, {0, 255, 7}), "uint_contents");
  ExpectRoundTrip(Make<uint16_t>(DataType::kUint16, {0, 65535, 7}), "uint_contents");
  ExpectRoundTrip(Make<uint32_t>(DataType::kUint32, {0, UINT32_MAX, 7}), "uint_contents");
  ExpectRoundTrip(Make<uint64_t>(DataType::kUint64, {0, UINT64_MAX, 7}), "uint64_contents");
  ExpectRoundTrip(Make<float>(DataType::kFp32, {0.1f, -3.4e38f, 1e-45f}), "fp32_contents");
  ExpectRoundTrip(Make<double>(DataType::kFp64, {0.1, -1.7e308, 5e-324}), "fp64_contents");
  std::string bytes;
  AppendBytesElement(bytes, "hello");
  AppendBytesElement(bytes, "");
  AppendBytesElement(bytes, std::string("a\0b", 3));
  ExpectRoundTrip(Tensor{"t", DataType::kBytes, {3}, Buffer::FromString(std::move(bytes))},
                  "bytes_contents");
}

TEST(TensorContentsTest, EncodeWidensIntoTheProtocolField) {
  InferTensorContents contents;
  ASSERT_TRUE(EncodeTypedContents(Make<int8_t>(DataType::kInt8, {-3, 4}), &contents).ok());
  EXPECT_THAT(contents.int_contents(), ::testing::ElementsAre(-3, 4));
  contents.Clear();
  ASSERT_TRUE(EncodeTypedContents(Make<uint8_t>(DataType::kBool, {0, 1}), &contents).ok());
  EXPECT_THAT(contents.bool_contents(), ::testing::ElementsAre(false, true));
}

TEST(TensorContentsTest, HalfPrecisionHasNoTypedField) {
  EXPECT_FALSE(HasTypedContents(DataType::kFp16));
  EXPECT_FALSE(HasTypedContents(DataType::kBf16));
  auto decoded = DecodeTypedContents(InferTensorContents(), DataType::kFp16, 0, "input 'h'");
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(decoded.status().message(), HasSubstr("raw_input_contents"));
  InferTensorContents contents;
  EXPECT_FALSE(EncodeTypedContents(Make<uint16_t>(DataType::kFp16, {1}), &contents).ok());
}

TEST(TensorContentsTest, DecodeRejectsWrongFieldCountAndRange) {
  InferTensorContents contents;
  contents.add_fp32_contents(1.0f);
  auto wrong_field = DecodeTypedContents(contents, DataType::kInt32, 1, "input 'x'");
  EXPECT_THAT(wrong_field.status().message(),
              HasSubstr("input 'x' is INT32 but sets fp32_contents; INT32 values go in int_contents"));

  contents.Clear();
  contents.add_int_contents(1);
  auto count = DecodeTypedContents(contents, DataType::kInt32, 16, "input 'x'");
  EXPECT_THAT(count.status().message(), HasSubstr("1 values in int_contents but its shape needs 16"));

  contents.Clear();
  contents.add_int_contents(5);
  contents.add_int_contents(300);
  auto range = DecodeTypedContents(contents, DataType::kInt8, 2, "input 'x'");
  EXPECT_THAT(range.status().message(), HasSubstr("value 300 at index 1 is out of range for INT8"));

  contents.Clear();
  contents.add_uint_contents(70000);
  auto urange = DecodeTypedContents(contents, DataType::kUint16, 1, "input 'x'");
  EXPECT_THAT(urange.status().message(), HasSubstr("out of range for UINT16"));
}

TEST(TensorContentsTest, EmptyTensorsAreFine) {
  auto decoded = DecodeTypedContents(InferTensorContents(), DataType::kFp32, 0, "input 'e'");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->size(), 0u);
  InferTensorContents contents;
  EXPECT_TRUE(EncodeTypedContents(Tensor{"e", DataType::kFp32, {0, 3}, Buffer()}, &contents).ok());
}

TEST(TensorContentsTest, EncodeRejectsBytesThatDoNotMatchTheShape) {
  Tensor bad = Make<int32_t>(DataType::kInt32, {1, 2});
  bad.shape = {3};
  InferTensorContents contents;
  EXPECT_EQ(EncodeTypedContents(bad, &contents).code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace infera
