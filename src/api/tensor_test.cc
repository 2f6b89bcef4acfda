#include "api/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor MakeTensor(std::string name, DataType dtype, Shape shape, std::string bytes) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = Buffer::FromString(std::move(bytes));
  return t;
}

std::string Serialize(const std::vector<std::string>& elements) {
  std::string out;
  for (const std::string& e : elements) AppendBytesElement(out, e);
  return out;
}

TEST(ElementCountTest, Products) {
  EXPECT_EQ(ElementCount({}), 1);
  EXPECT_EQ(ElementCount({7}), 7);
  EXPECT_EQ(ElementCount({2, 3, 4}), 24);
  EXPECT_EQ(ElementCount({0}), 0);
  EXPECT_EQ(ElementCount({3, 0, 5}), 0);
  EXPECT_EQ(ElementCount({INT64_MAX}), INT64_MAX);
  EXPECT_EQ(ElementCount({int64_t{1} << 31, int64_t{1} << 31}), int64_t{1} << 62);
  // A zero dimension makes any later dimension harmless.
  EXPECT_EQ(ElementCount({0, INT64_MAX, INT64_MAX}), 0);
}

TEST(ElementCountTest, NegativeDimensions) {
  EXPECT_EQ(ElementCount({-1}), std::nullopt);
  EXPECT_EQ(ElementCount({2, -3}), std::nullopt);
  EXPECT_EQ(ElementCount({0, -1}), std::nullopt);
  EXPECT_EQ(ElementCount({INT64_MIN}), std::nullopt);
}

TEST(ElementCountTest, Overflow) {
  EXPECT_EQ(ElementCount({INT64_MAX, 2}), std::nullopt);
  EXPECT_EQ(ElementCount({int64_t{1} << 32, int64_t{1} << 31}), std::nullopt);  // 2^63
  EXPECT_EQ(ElementCount({3037000500, 3037000500}), std::nullopt);  // just over sqrt(2^63)
  EXPECT_EQ(ElementCount({3037000499, 3037000499}), int64_t{3037000499} * 3037000499);
  EXPECT_EQ(ElementCount({1024, 1024, 1024, 1024, 1024, 1024, 1024}), std::nullopt);  // 2^70
}

TEST(ShapeToStringTest, Formats) {
  EXPECT_EQ(ShapeToString({}), "[]");
  EXPECT_EQ(ShapeToString({2, 3, 224}), "[2,3,224]");
  EXPECT_EQ(ShapeToString({-1}), "[-1]");
}

TEST(ValidateTensorDataTest, FixedSizeRightSize) {
  EXPECT_TRUE(
      ValidateTensorData(MakeTensor("x", DataType::kFp32, {2, 2}, std::string(16, 0))).ok());
  EXPECT_TRUE(ValidateTensorData(MakeTensor("x", DataType::kBool, {3}, std::string(3, 1))).ok());
  EXPECT_TRUE(ValidateTensorData(MakeTensor("x", DataType::kInt64, {}, std::string(8, 0))).ok());
  EXPECT_TRUE(ValidateTensorData(MakeTensor("x", DataType::kFp16, {0, 4}, "")).ok());
  EXPECT_TRUE(ValidateTensorData(MakeTensor("x", DataType::kBf16, {5}, std::string(10, 0))).ok());
}

TEST(ValidateTensorDataTest, FixedSizeWrongSize) {
  absl::Status s =
      ValidateTensorData(MakeTensor("input0", DataType::kFp32, {2, 2}, std::string(15, 0)));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input0"));
  EXPECT_THAT(s.message(), HasSubstr("15"));
  EXPECT_THAT(s.message(), HasSubstr("16"));
  EXPECT_THAT(s.message(), HasSubstr("FP32"));
  EXPECT_FALSE(
      ValidateTensorData(MakeTensor("x", DataType::kFp32, {2, 2}, std::string(17, 0))).ok());
  EXPECT_FALSE(ValidateTensorData(MakeTensor("x", DataType::kInt64, {}, "")).ok());
}

TEST(ValidateTensorDataTest, InvalidShapeOrType) {
  absl::Status s = ValidateTensorData(MakeTensor("x", DataType::kFp32, {-1}, ""));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("[-1]"));
  s = ValidateTensorData(MakeTensor("x", DataType::kFp32, {INT64_MAX, 2}, ""));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // The element count fits int64 but the byte count does not fit 64 bits.
  s = ValidateTensorData(MakeTensor("big", DataType::kFp64, {INT64_MAX}, ""));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("too large"));
  s = ValidateTensorData(MakeTensor("x", DataType::kInvalid, {1}, "a"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("datatype"));
}

TEST(ValidateTensorDataTest, BytesValid) {
  EXPECT_TRUE(ValidateTensorData(MakeTensor("s", DataType::kBytes, {3},
                                            Serialize({"ab", "", std::string("\0x", 2)})))
                  .ok());
  EXPECT_TRUE(ValidateTensorData(MakeTensor("s", DataType::kBytes, {0}, "")).ok());
  EXPECT_TRUE(
      ValidateTensorData(MakeTensor("s", DataType::kBytes, {1, 2}, Serialize({"a", "b"}))).ok());
}

TEST(ValidateTensorDataTest, BytesCountMismatch) {
  absl::Status s =
      ValidateTensorData(MakeTensor("s", DataType::kBytes, {2}, Serialize({"a", "b", "c"})));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'s' has 3 BYTES elements"));
  EXPECT_THAT(s.message(), HasSubstr("[2]"));
  s = ValidateTensorData(MakeTensor("s", DataType::kBytes, {4}, Serialize({"a", "b", "c"})));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  s = ValidateTensorData(MakeTensor("s", DataType::kBytes, {1}, ""));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateTensorDataTest, BytesTruncatedOrExtra) {
  std::string data = Serialize({"hello", "world"});
  // Truncated inside the last element.
  absl::Status s =
      ValidateTensorData(MakeTensor("s", DataType::kBytes, {2}, data.substr(0, data.size() - 1)));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'s'"));
  EXPECT_THAT(s.message(), HasSubstr("declares 5 bytes but only 4 remain"));
  // Truncated inside a length prefix.
  s = ValidateTensorData(MakeTensor("s", DataType::kBytes, {2}, data.substr(0, 11)));
  EXPECT_THAT(s.message(), HasSubstr("truncated"));
  // Extra bytes after the last element that cannot be a prefix.
  s = ValidateTensorData(MakeTensor("s", DataType::kBytes, {2}, data + "xy"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("truncated"));
  // Extra bytes that form one more element.
  s = ValidateTensorData(MakeTensor("s", DataType::kBytes, {2}, data + Serialize({""})));
  EXPECT_THAT(s.message(), HasSubstr("has 3 BYTES elements"));
}

TEST(SplitBytesElementsTest, Splits) {
  const std::string nul_inside("a\0b", 3);
  std::string data = Serialize({"x", "", nul_inside, std::string(300, 'z')});
  absl::StatusOr<std::vector<std::string_view>> elements = SplitBytesElements(data);
  ASSERT_TRUE(elements.ok()) << elements.status();
  ASSERT_EQ(elements->size(), 4u);
  EXPECT_EQ((*elements)[0], "x");
  EXPECT_EQ((*elements)[1], "");
  EXPECT_EQ((*elements)[2], nul_inside);
  EXPECT_EQ((*elements)[3], std::string(300, 'z'));
  // Views into the input, not copies.
  EXPECT_EQ((*elements)[0].data(), data.data() + 4);
}

TEST(SplitBytesElementsTest, EmptyInputHasNoElements) {
  absl::StatusOr<std::vector<std::string_view>> elements = SplitBytesElements("");
  ASSERT_TRUE(elements.ok());
  EXPECT_TRUE(elements->empty());
}

TEST(SplitBytesElementsTest, RejectsHostileLengths) {
  // A length prefix of 2^32-1 must not wrap the bounds check.
  std::string data(
      "\xff\xff\xff\xff"
      "abc",
      7);
  absl::StatusOr<std::vector<std::string_view>> elements = SplitBytesElements(data);
  EXPECT_EQ(elements.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(elements.status().message(), HasSubstr("element 0 declares 4294967295 bytes"));
  for (size_t n = 1; n < 4; ++n) {
    EXPECT_FALSE(SplitBytesElements(std::string(n, '\0')).ok()) << n;
  }
}

TEST(AppendBytesElementTest, LittleEndianPrefix) {
  std::string out;
  AppendBytesElement(out, "abc");
  AppendBytesElement(out, std::string(258, 'q'));
  ASSERT_EQ(out.size(), 4u + 3 + 4 + 258);
  EXPECT_EQ(out.substr(0, 7), std::string("\x03\x00\x00\x00"
                                          "abc",
                                          7));
  EXPECT_EQ(out.substr(7, 4), std::string("\x02\x01\x00\x00", 4));
  auto elements = SplitBytesElements(out);
  ASSERT_TRUE(elements.ok());
  EXPECT_THAT(*elements, ElementsAre("abc", std::string(258, 'q')));
}

}  // namespace
}  // namespace infera
