#include "grpc/tensor_contents.h"

#include <cstring>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using inference::InferTensorContents;

template <typename T>
std::string Packed(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// Decodes `contents` as `type` and expects the tensor bytes `expected`, from the named field.
void ExpectDecodes(const InferTensorContents& contents, DataType type, int64_t count,
                   const std::string& expected, std::string_view field) {
  SCOPED_TRACE(DataTypeName(type));
  EXPECT_EQ(TypedContentsField(type), field);
  auto decoded = DecodeTypedContents(contents, type, count, "input 't'");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->AsStringView(), expected);
}

TEST(TensorContentsTest, EveryTypedDatatypeDecodes) {
  InferTensorContents c;
  for (bool v : {true, false, true}) c.add_bool_contents(v);
  ExpectDecodes(c, DataType::kBool, 3, Packed<uint8_t>({1, 0, 1}), "bool_contents");

  c.Clear();
  for (int v : {-128, 127, 0}) c.add_int_contents(v);
  ExpectDecodes(c, DataType::kInt8, 3, Packed<int8_t>({-128, 127, 0}), "int_contents");
  c.Clear();
  for (int v : {-32768, 32767, 0}) c.add_int_contents(v);
  ExpectDecodes(c, DataType::kInt16, 3, Packed<int16_t>({-32768, 32767, 0}), "int_contents");
  c.Clear();
  for (int v : {INT32_MIN, INT32_MAX, 0}) c.add_int_contents(v);
  ExpectDecodes(c, DataType::kInt32, 3, Packed<int32_t>({INT32_MIN, INT32_MAX, 0}), "int_contents");
  c.Clear();
  for (int64_t v : {INT64_MIN, INT64_MAX, int64_t{0}}) c.add_int64_contents(v);
  ExpectDecodes(c, DataType::kInt64, 3, Packed<int64_t>({INT64_MIN, INT64_MAX, 0}), "int64_contents");

  c.Clear();
  for (unsigned v : {0u, 255u, 7u}) c.add_uint_contents(v);
  ExpectDecodes(c, DataType::kUint8, 3, Packed<uint8_t>({0, 255, 7}), "uint_contents");
  c.Clear();
  for (unsigned v : {0u, 65535u, 7u}) c.add_uint_contents(v);
  ExpectDecodes(c, DataType::kUint16, 3, Packed<uint16_t>({0, 65535, 7}), "uint_contents");
  c.Clear();
  for (unsigned v : {0u, UINT32_MAX, 7u}) c.add_uint_contents(v);
  ExpectDecodes(c, DataType::kUint32, 3, Packed<uint32_t>({0, UINT32_MAX, 7}), "uint_contents");
  c.Clear();
  for (uint64_t v : {uint64_t{0}, UINT64_MAX, uint64_t{7}}) c.add_uint64_contents(v);
  ExpectDecodes(c, DataType::kUint64, 3, Packed<uint64_t>({0, UINT64_MAX, 7}), "uint64_contents");

  c.Clear();
  for (float v : {0.1f, -3.4e38f, 1e-45f}) c.add_fp32_contents(v);
  ExpectDecodes(c, DataType::kFp32, 3, Packed<float>({0.1f, -3.4e38f, 1e-45f}), "fp32_contents");
  c.Clear();
  for (double v : {0.1, -1.7e308, 5e-324}) c.add_fp64_contents(v);
  ExpectDecodes(c, DataType::kFp64, 3, Packed<double>({0.1, -1.7e308, 5e-324}), "fp64_contents");

  c.Clear();
  c.add_bytes_contents("hello");
  c.add_bytes_contents("");
  c.add_bytes_contents(std::string("a\0b", 3));
  std::string bytes;
  AppendBytesElement(bytes, "hello");
  AppendBytesElement(bytes, "");
  AppendBytesElement(bytes, std::string("a\0b", 3));
  ExpectDecodes(c, DataType::kBytes, 3, bytes, "bytes_contents");
}

TEST(TensorContentsTest, HalfPrecisionHasNoTypedField) {
  EXPECT_EQ(TypedContentsField(DataType::kFp16), "");
  EXPECT_EQ(TypedContentsField(DataType::kBf16), "");
  auto decoded = DecodeTypedContents(InferTensorContents(), DataType::kFp16, 0, "input 'h'");
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(decoded.status().message(), HasSubstr("raw_input_contents"));
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
}

}  // namespace
}  // namespace infera
