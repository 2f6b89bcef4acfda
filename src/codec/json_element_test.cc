#include "codec/json_element.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "api/float16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

JsonToken Number(std::string_view text) { return {text, JsonTokenKind::kNumber, false}; }
JsonToken String(std::string_view text) { return {text, JsonTokenKind::kString, false}; }
JsonToken Bool(bool b) { return {{}, JsonTokenKind::kBool, b}; }
JsonToken Null() { return {}; }

// Converts one token; returns the element bytes or the error.
struct Converted {
  ElementError error;
  std::string bytes;
};
Converted Convert(DataType dtype, const JsonToken& token) {
  GrowableBuffer out;
  const ElementError error = AppendJsonElement(dtype, token, out);
  Buffer b = std::move(out).Finish();
  return {error, std::string(b.AsStringView())};
}

template <typename T>
T As(const Converted& c) {
  EXPECT_EQ(c.error, ElementError::kNone);
  EXPECT_EQ(c.bytes.size(), sizeof(T));
  T value{};
  if (c.bytes.size() == sizeof(T)) std::memcpy(&value, c.bytes.data(), sizeof(T));
  return value;
}

template <typename T>
void CheckIntegerLimits(DataType dtype) {
  using L = std::numeric_limits<T>;
  const std::string min = std::to_string(L::min());
  const std::string max = std::to_string(L::max());
  EXPECT_EQ(As<T>(Convert(dtype, Number(min))), L::min()) << min;
  EXPECT_EQ(As<T>(Convert(dtype, Number(max))), L::max()) << max;
  // One past each end (as text, so 64-bit limits do not overflow here).
  std::string above, below;
  if constexpr (std::is_same_v<T, uint64_t>) {
    above = "18446744073709551616";
  } else if constexpr (std::is_same_v<T, int64_t>) {
    above = "9223372036854775808";
  } else {
    above = std::to_string(static_cast<int64_t>(L::max()) + 1);
  }
  if constexpr (std::is_same_v<T, int64_t>) {
    below = "-9223372036854775809";
  } else {
    below = std::to_string(static_cast<int64_t>(L::min()) - 1);
  }
  EXPECT_EQ(Convert(dtype, Number(above)).error, ElementError::kOutOfRange) << above;
  EXPECT_EQ(Convert(dtype, Number(below)).error, ElementError::kOutOfRange) << below;
  EXPECT_EQ(Convert(dtype, Number("1.5")).error, ElementError::kNotInteger);
  EXPECT_EQ(Convert(dtype, Number("1.0")).error, ElementError::kNotInteger);
  EXPECT_EQ(Convert(dtype, Number("1e2")).error, ElementError::kNotInteger);
  EXPECT_EQ(Convert(dtype, Number("NaN")).error, ElementError::kNotInteger);
  EXPECT_EQ(Convert(dtype, String("1")).error, ElementError::kWrongKind);
  EXPECT_EQ(Convert(dtype, Bool(true)).error, ElementError::kWrongKind);
  EXPECT_EQ(Convert(dtype, Null()).error, ElementError::kWrongKind);
  EXPECT_EQ(As<T>(Convert(dtype, Number("-0"))), T{0});
}

TEST(JsonElementTest, IntegerLimitsForEveryType) {
  CheckIntegerLimits<int8_t>(DataType::kInt8);
  CheckIntegerLimits<int16_t>(DataType::kInt16);
  CheckIntegerLimits<int32_t>(DataType::kInt32);
  CheckIntegerLimits<int64_t>(DataType::kInt64);
  CheckIntegerLimits<uint8_t>(DataType::kUint8);
  CheckIntegerLimits<uint16_t>(DataType::kUint16);
  CheckIntegerLimits<uint32_t>(DataType::kUint32);
  CheckIntegerLimits<uint64_t>(DataType::kUint64);
}

TEST(JsonElementTest, IntegerErrorMessages) {
  EXPECT_EQ(DescribeElementError(ElementError::kOutOfRange, DataType::kInt8, Number("300")),
            "number 300 is out of range for INT8 [-128, 127]");
  EXPECT_EQ(DescribeElementError(ElementError::kOutOfRange, DataType::kUint32, Number("-1")),
            "number -1 is out of range for UINT32 [0, 4294967295]");
  EXPECT_EQ(DescribeElementError(ElementError::kNotInteger, DataType::kInt32, Number("1.5")),
            "expected an integer for INT32, got number 1.5");
  EXPECT_EQ(DescribeElementError(ElementError::kWrongKind, DataType::kInt64, String("7")),
            "expected an integer for INT64, got string \"7\"");
  EXPECT_EQ(DescribeElementError(ElementError::kWrongKind, DataType::kBool, Number("1")),
            "expected true or false for BOOL, got number 1");
  EXPECT_EQ(DescribeElementError(ElementError::kWrongKind, DataType::kBytes, Null()),
            "expected a string for BYTES, got null");
  EXPECT_THAT(DescribeElementError(ElementError::kWrongKind, DataType::kFp32,
                                   String(std::string(100, 'x'))),
              HasSubstr("...\""));
}

TEST(JsonElementTest, Bool) {
  EXPECT_EQ(As<uint8_t>(Convert(DataType::kBool, Bool(true))), 1);
  EXPECT_EQ(As<uint8_t>(Convert(DataType::kBool, Bool(false))), 0);
  EXPECT_EQ(Convert(DataType::kBool, Number("1")).error, ElementError::kWrongKind);
  EXPECT_EQ(Convert(DataType::kBool, String("true")).error, ElementError::kWrongKind);
}

TEST(JsonElementTest, Fp32ParsesCorrectlyRounded) {
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("0.1"))), 0.1f);
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("1"))), 1.0f);
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("-2.5e-3"))), -2.5e-3f);
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("3.4028235e38"))),
            std::numeric_limits<float>::max());
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("16777217"))), 16777216.0f);  // tie
  // Decimal -> double -> float would round this twice and get the wrong neighbour:
  // 1 + 2^-24 + 2^-60 is just above the float midpoint, but the nearest double is the
  // midpoint itself, which ties to even (1.0).
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("1.00000005960464477539062500000000008"))),
            std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("1e-45"))),
            std::numeric_limits<float>::denorm_min());
}

TEST(JsonElementTest, FloatSpecialValues) {
  EXPECT_TRUE(std::isnan(As<float>(Convert(DataType::kFp32, Number("NaN")))));
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("Infinity"))), INFINITY);
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("-Infinity"))), -INFINITY);
  EXPECT_EQ(As<double>(Convert(DataType::kFp64, Number("-Infinity"))), -INFINITY);
  EXPECT_TRUE(std::isnan(As<double>(Convert(DataType::kFp64, Number("NaN")))));
  EXPECT_EQ(As<uint16_t>(Convert(DataType::kFp16, Number("Infinity"))), 0x7c00);
  EXPECT_EQ(As<uint16_t>(Convert(DataType::kBf16, Number("-Infinity"))), 0xff80);
  EXPECT_TRUE(std::isnan(HalfToFloat(As<uint16_t>(Convert(DataType::kFp16, Number("NaN"))))));
  EXPECT_TRUE(std::isnan(Bf16ToFloat(As<uint16_t>(Convert(DataType::kBf16, Number("NaN"))))));
}

TEST(JsonElementTest, FloatRange) {
  EXPECT_EQ(Convert(DataType::kFp32, Number("1e39")).error, ElementError::kOutOfRange);
  EXPECT_EQ(Convert(DataType::kFp32, Number("-3.5e38")).error, ElementError::kOutOfRange);
  EXPECT_EQ(Convert(DataType::kFp64, Number("1e300")).error, ElementError::kNone);
  EXPECT_EQ(Convert(DataType::kFp64, Number("2e308")).error, ElementError::kOutOfRange);
  // Underflow is not an error: the value rounds to zero (keeping its sign).
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("1e-50"))), 0.0f);
  EXPECT_TRUE(std::signbit(As<float>(Convert(DataType::kFp32, Number("-1e-50")))));
  EXPECT_EQ(As<double>(Convert(DataType::kFp64, Number("1e-400"))), 0.0);
  EXPECT_EQ(As<float>(Convert(DataType::kFp32, Number("1e-400"))), 0.0f);
  EXPECT_THAT(DescribeElementError(ElementError::kOutOfRange, DataType::kFp32, Number("1e39")),
              HasSubstr("number 1e39 is out of range for FP32"));
}

TEST(JsonElementTest, HalfAndBfloat16) {
  EXPECT_EQ(As<uint16_t>(Convert(DataType::kFp16, Number("1"))), 0x3c00);
  EXPECT_EQ(As<uint16_t>(Convert(DataType::kFp16, Number("65504"))), 0x7bff);
  EXPECT_EQ(As<uint16_t>(Convert(DataType::kFp16, Number("65519"))), 0x7bff);
  EXPECT_EQ(Convert(DataType::kFp16, Number("65520")).error, ElementError::kOutOfRange);
  EXPECT_EQ(Convert(DataType::kFp16, Number("-1e5")).error, ElementError::kOutOfRange);
  EXPECT_EQ(As<uint16_t>(Convert(DataType::kFp16, Number("1e-8"))), 0x0000);
  EXPECT_EQ(As<uint16_t>(Convert(DataType::kBf16, Number("1"))), 0x3f80);
  EXPECT_EQ(As<uint16_t>(Convert(DataType::kBf16, Number("3.140625"))), 0x4049);
  EXPECT_EQ(Convert(DataType::kBf16, Number("3.4e38")).error, ElementError::kOutOfRange);
  EXPECT_EQ(Convert(DataType::kFp16, String("1")).error, ElementError::kWrongKind);
}

TEST(JsonElementTest, Bytes) {
  const std::string with_nul("a\0b", 3);
  Converted c = Convert(DataType::kBytes, String(with_nul));
  ASSERT_EQ(c.error, ElementError::kNone);
  EXPECT_EQ(c.bytes, std::string("\x03\x00\x00\x00"
                                 "a\0b",
                                 7));
  EXPECT_EQ(Convert(DataType::kBytes, String("")).bytes, std::string(4, '\0'));
  EXPECT_EQ(Convert(DataType::kBytes, Number("1")).error, ElementError::kWrongKind);
  EXPECT_EQ(Convert(DataType::kBytes, Bool(false)).error, ElementError::kWrongKind);
}

TEST(JsonElementTest, ErrorsLeaveTheOutputUnchanged) {
  GrowableBuffer out;
  ASSERT_EQ(AppendJsonElement(DataType::kInt8, Number("5"), out), ElementError::kNone);
  EXPECT_NE(AppendJsonElement(DataType::kInt8, Number("500"), out), ElementError::kNone);
  EXPECT_NE(AppendJsonElement(DataType::kFp16, Number("1e6"), out), ElementError::kNone);
  EXPECT_EQ(out.size(), 1u);
}

TEST(JsonElementTest, ParseJsonInt64AndDouble) {
  int64_t i;
  EXPECT_TRUE(ParseJsonInt64("-9223372036854775808", &i));
  EXPECT_EQ(i, INT64_MIN);
  EXPECT_FALSE(ParseJsonInt64("9223372036854775808", &i));
  EXPECT_FALSE(ParseJsonInt64("1.0", &i));
  EXPECT_FALSE(ParseJsonInt64("", &i));
  double d;
  EXPECT_TRUE(ParseJsonDouble("0.1", &d));
  EXPECT_EQ(d, 0.1);
  EXPECT_TRUE(ParseJsonDouble("-Infinity", &d));
  EXPECT_EQ(d, -INFINITY);
  EXPECT_FALSE(ParseJsonDouble("1e999", &d));
}

TEST(GrowableBufferTest, ExactReservationIsNotCopied) {
  GrowableBuffer out;
  out.Reserve(12);
  uint8_t* first = out.Append(4);
  out.Append(8);
  Buffer b = std::move(out).Finish();
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(b.size(), 12u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
  EXPECT_EQ(out.size(), 0u);
}

TEST(GrowableBufferTest, GrowsAndKeepsBytes) {
  GrowableBuffer out;
  for (int i = 0; i < 1000; ++i) *out.Append(1) = static_cast<uint8_t>(i);
  Buffer b = std::move(out).Finish();
  ASSERT_EQ(b.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(b.data()[i], static_cast<uint8_t>(i));
  EXPECT_TRUE(std::move(GrowableBuffer()).Finish().empty());
}

}  // namespace
}  // namespace infera
