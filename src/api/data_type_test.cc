#include "api/data_type.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace infera {
namespace {

const std::vector<std::pair<DataType, std::string>>& AllTypes() {
  static const auto* types = new std::vector<std::pair<DataType, std::string>>{
      {DataType::kBool, "BOOL"},     {DataType::kUint8, "UINT8"},   {DataType::kUint16, "UINT16"},
      {DataType::kUint32, "UINT32"}, {DataType::kUint64, "UINT64"}, {DataType::kInt8, "INT8"},
      {DataType::kInt16, "INT16"},   {DataType::kInt32, "INT32"},   {DataType::kInt64, "INT64"},
      {DataType::kFp16, "FP16"},     {DataType::kFp32, "FP32"},     {DataType::kFp64, "FP64"},
      {DataType::kBytes, "BYTES"},   {DataType::kBf16, "BF16"},
  };
  return *types;
}

TEST(DataTypeTest, EveryKServeNameRoundTrips) {
  for (const auto& [type, name] : AllTypes()) {
    EXPECT_EQ(DataTypeName(type), name);
    std::optional<DataType> parsed = ParseDataTypeName(name);
    ASSERT_TRUE(parsed.has_value()) << name;
    EXPECT_EQ(*parsed, type) << name;
  }
}

TEST(DataTypeTest, InvalidHasAName) { EXPECT_EQ(DataTypeName(DataType::kInvalid), "INVALID"); }

TEST(DataTypeTest, UnknownNamesAreRejected) {
  for (const char* name : {"", "INVALID", "fp32", "Fp32", "FP8", "FP32 ", " FP32", "STRING",
                           "TYPE_FP32", "INT128", "UINT", "BF"}) {
    EXPECT_FALSE(ParseDataTypeName(name).has_value()) << "'" << name << "'";
  }
  EXPECT_FALSE(ParseDataTypeName(std::string_view("FP32\0", 5)).has_value());
}

TEST(DataTypeTest, ByteSizes) {
  EXPECT_EQ(DataTypeByteSize(DataType::kBool), 1u);
  EXPECT_EQ(DataTypeByteSize(DataType::kUint8), 1u);
  EXPECT_EQ(DataTypeByteSize(DataType::kUint16), 2u);
  EXPECT_EQ(DataTypeByteSize(DataType::kUint32), 4u);
  EXPECT_EQ(DataTypeByteSize(DataType::kUint64), 8u);
  EXPECT_EQ(DataTypeByteSize(DataType::kInt8), 1u);
  EXPECT_EQ(DataTypeByteSize(DataType::kInt16), 2u);
  EXPECT_EQ(DataTypeByteSize(DataType::kInt32), 4u);
  EXPECT_EQ(DataTypeByteSize(DataType::kInt64), 8u);
  EXPECT_EQ(DataTypeByteSize(DataType::kFp16), 2u);
  EXPECT_EQ(DataTypeByteSize(DataType::kFp32), 4u);
  EXPECT_EQ(DataTypeByteSize(DataType::kFp64), 8u);
  EXPECT_EQ(DataTypeByteSize(DataType::kBf16), 2u);
  EXPECT_EQ(DataTypeByteSize(DataType::kBytes), 0u);
  EXPECT_EQ(DataTypeByteSize(DataType::kInvalid), 0u);
}

}  // namespace
}  // namespace infera
