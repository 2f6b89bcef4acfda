// Round trips through the whole codec: request JSON/binary -> InferRequest ->
// InferResponse (the decoded tensors as outputs) -> response body -> parsed back.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "api/float16.h"
#include "codec/codec_test_util.h"
#include "codec/kserve_http_codec.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using testing_util::Bytes;
using testing_util::MakeTensor;
using testing_util::ParseJson;
using testing_util::SerializeBytes;
using testing_util::Values;

constexpr size_t kMaxElements = 1 << 22;

// One datatype's test values: as JSON text and as the bytes they must decode to.
struct TypeCase {
  std::string dtype;
  std::string json_values;  // a JSON array
  std::string bytes;        // the expected tensor data
  int64_t count;
};

std::vector<TypeCase> AllTypeCases() {
  return {
      {"BOOL", "[true,false,true]", std::string("\x01\x00\x01", 3), 3},
      {"UINT8", "[0,255,7]", Bytes(std::vector<uint8_t>{0, 255, 7}), 3},
      {"UINT16", "[0,65535,7]", Bytes(std::vector<uint16_t>{0, 65535, 7}), 3},
      {"UINT32", "[0,4294967295,7]", Bytes(std::vector<uint32_t>{0, 4294967295u, 7}), 3},
      {"UINT64", "[0,18446744073709551615,7]", Bytes(std::vector<uint64_t>{0, UINT64_MAX, 7}), 3},
      {"INT8", "[-128,127,0]", Bytes(std::vector<int8_t>{-128, 127, 0}), 3},
      {"INT16", "[-32768,32767,0]", Bytes(std::vector<int16_t>{-32768, 32767, 0}), 3},
      {"INT32", "[-2147483648,2147483647,0]", Bytes(std::vector<int32_t>{INT32_MIN, INT32_MAX, 0}),
       3},
      {"INT64", "[-9223372036854775808,9223372036854775807,0]",
       Bytes(std::vector<int64_t>{INT64_MIN, INT64_MAX, 0}), 3},
      {"FP16", "[0.5,-65504,6e-08]", Bytes(std::vector<uint16_t>{0x3800, 0xfbff, 0x0001}), 3},
      {"FP32", "[0.1,-3.4028235e+38,1e-45]",
       Bytes(std::vector<float>{0.1f, -std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::denorm_min()}),
       3},
      {"FP64", "[0.1,1.7976931348623157e+308,5e-324]",
       Bytes(std::vector<double>{0.1, std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::denorm_min()}),
       3},
      {"BF16", "[1,-3.140625,Infinity]", Bytes(std::vector<uint16_t>{0x3f80, 0xc049, 0x7f80}), 3},
      {"BYTES", R"(["hello","","a\u0000b"])", SerializeBytes({"hello", "", std::string("a\0b", 3)}),
       3},
  };
}

std::string JsonRequest(std::string_view name, std::string_view dtype, int64_t count,
                        std::string_view values) {
  return StrCat(R"({"inputs":[{"name":")", name, R"(","shape":[)", count, R"(],"datatype":")",
                dtype, R"(","data":)", values, "}]}");
}

// The response's "outputs" array read back as a request: outputs have exactly the shape of
// JSON inputs, and "outputs" is the response's last key.
std::string ResponseAsRequest(const std::string& response_json) {
  const size_t at = response_json.find(R"("outputs":)");
  return StrCat(R"({"inputs":)", response_json.substr(at + 10));
}

InferResponse Echo(const InferRequest& request) {
  InferResponse response;
  response.model_name = "echo";
  response.model_version = 1;
  response.id = request.id;
  response.outputs = request.inputs;
  return response;
}

TEST(RoundTripTest, EveryDatatypeThroughJson) {
  for (const TypeCase& c : AllTypeCases()) {
    SCOPED_TRACE(c.dtype);
    absl::StatusOr<InferRequest> request = DecodeInferRequest(
        JsonRequest("t", c.dtype, c.count, c.json_values), std::nullopt, kMaxElements);
    ASSERT_TRUE(request.ok()) << request.status();
    ASSERT_EQ(request->inputs[0].data.AsStringView(), c.bytes);

    absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(Echo(*request), {});
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    ASSERT_FALSE(encoded->json_header_length.has_value());
    rapidjson::Document doc = ParseJson(encoded->body);
    ASSERT_FALSE(doc.HasParseError()) << encoded->body;
    const rapidjson::Value& output = doc["outputs"][0];
    EXPECT_EQ(std::string(output["datatype"].GetString()), c.dtype);
    EXPECT_EQ(output["shape"][0].GetInt64(), c.count);
    ASSERT_EQ(output["data"].Size(), static_cast<rapidjson::SizeType>(c.count));
    // Decoding the response's data again gives back the very same bytes.
    absl::StatusOr<InferRequest> again =
        DecodeInferRequest(ResponseAsRequest(encoded->body), std::nullopt, kMaxElements);
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << encoded->body;
    EXPECT_EQ(again->inputs[0].data.AsStringView(), c.bytes) << encoded->body;
  }
}

TEST(RoundTripTest, JsonNumbersAsAClientReadsThem) {
  absl::StatusOr<InferRequest> request = DecodeInferRequest(
      R"({"inputs":[{"name":"f","shape":[3],"datatype":"FP32","data":[0.1,2.5,-1e-10]},
                    {"name":"i","shape":[2],"datatype":"INT64","data":[-5,9007199254740993]},
                    {"name":"b","shape":[1],"datatype":"BOOL","data":[true]},
                    {"name":"s","shape":[1],"datatype":"BYTES","data":["x y"]}]})",
      std::nullopt, kMaxElements);
  ASSERT_TRUE(request.ok()) << request.status();
  absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(Echo(*request), {});
  ASSERT_TRUE(encoded.ok());
  rapidjson::Document doc = ParseJson(encoded->body);
  ASSERT_FALSE(doc.HasParseError());
  const rapidjson::Value& outputs = doc["outputs"];
  EXPECT_EQ(static_cast<float>(outputs[0]["data"][0].GetDouble()), 0.1f);
  EXPECT_EQ(outputs[0]["data"][1].GetDouble(), 2.5);
  EXPECT_EQ(static_cast<float>(outputs[0]["data"][2].GetDouble()), -1e-10f);
  EXPECT_EQ(outputs[1]["data"][0].GetInt64(), -5);
  EXPECT_EQ(outputs[1]["data"][1].GetInt64(), 9007199254740993);
  EXPECT_TRUE(outputs[2]["data"][0].GetBool());
  EXPECT_EQ(std::string(outputs[3]["data"][0].GetString()), "x y");
  EXPECT_EQ(std::string(doc["model_version"].GetString()), "1");
}

TEST(RoundTripTest, EveryDatatypeThroughBinary) {
  OutputEncoding binary;
  binary.binary_by_default = true;
  for (const TypeCase& c : AllTypeCases()) {
    SCOPED_TRACE(c.dtype);
    const std::string json =
        StrCat(R"({"id":"b1","inputs":[{"name":"t","shape":[)", c.count, R"(],"datatype":")",
               c.dtype, R"(","parameters":{"binary_data_size":)", c.bytes.size(),
               R"(}}],"parameters":{"binary_data_output":true}})");
    absl::StatusOr<InferRequest> request =
        DecodeInferRequest(json + c.bytes, json.size(), kMaxElements);
    ASSERT_TRUE(request.ok()) << request.status();
    ASSERT_EQ(request->inputs[0].data.AsStringView(), c.bytes);
    absl::StatusOr<EncodedInferResponse> encoded =
        EncodeInferResponse(Echo(*request), OutputEncoding::FromRequest(*request));
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    ASSERT_TRUE(encoded->json_header_length.has_value());
    const std::string_view body = encoded->body;
    rapidjson::Document doc = ParseJson(body.substr(0, *encoded->json_header_length));
    ASSERT_FALSE(doc.HasParseError());
    EXPECT_EQ(std::string(doc["id"].GetString()), "b1");
    const rapidjson::Value& output = doc["outputs"][0];
    EXPECT_EQ(output["parameters"]["binary_data_size"].GetUint64(), c.bytes.size());
    EXPECT_EQ(body.substr(*encoded->json_header_length), c.bytes);
  }
}

// Random float bit patterns: encode as JSON, decode again, compare bits (NaN stays NaN).
TEST(RoundTripTest, RandomFloatBitsSurviveJson) {
  std::mt19937_64 rng(7);
  constexpr int kCount = 100000;
  std::vector<uint32_t> f32(kCount);
  std::vector<uint64_t> f64(kCount);
  for (int i = 0; i < kCount; ++i) {
    f32[i] = static_cast<uint32_t>(rng());
    f64[i] = rng();
  }
  // Every 16-bit pattern, for FP16 and BF16.
  std::vector<uint16_t> all16(65536);
  for (uint32_t i = 0; i < 65536; ++i) all16[i] = static_cast<uint16_t>(i);

  InferResponse response;
  response.outputs = {MakeTensor("f32", DataType::kFp32, {kCount}, Bytes(f32)),
                      MakeTensor("f64", DataType::kFp64, {kCount}, Bytes(f64)),
                      MakeTensor("f16", DataType::kFp16, {65536}, Bytes(all16)),
                      MakeTensor("bf16", DataType::kBf16, {65536}, Bytes(all16))};
  absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(response, {});
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  absl::StatusOr<InferRequest> decoded =
      DecodeInferRequest(ResponseAsRequest(encoded->body), std::nullopt, kMaxElements);
  ASSERT_TRUE(decoded.ok()) << decoded.status();

  const std::vector<uint32_t> back32 = Values<uint32_t>(decoded->inputs[0]);
  const std::vector<uint64_t> back64 = Values<uint64_t>(decoded->inputs[1]);
  for (int i = 0; i < kCount; ++i) {
    float a, b;
    std::memcpy(&a, &f32[i], 4);
    std::memcpy(&b, &back32[i], 4);
    if (std::isnan(a)) {
      ASSERT_TRUE(std::isnan(b)) << std::hex << f32[i];
    } else {
      ASSERT_EQ(back32[i], f32[i]) << std::hex << f32[i];
    }
    double c, d;
    std::memcpy(&c, &f64[i], 8);
    std::memcpy(&d, &back64[i], 8);
    if (std::isnan(c)) {
      ASSERT_TRUE(std::isnan(d)) << std::hex << f64[i];
    } else {
      ASSERT_EQ(back64[i], f64[i]) << std::hex << f64[i];
    }
  }
  const std::vector<uint16_t> back16 = Values<uint16_t>(decoded->inputs[2]);
  const std::vector<uint16_t> backbf = Values<uint16_t>(decoded->inputs[3]);
  for (uint32_t i = 0; i < 65536; ++i) {
    if (std::isnan(HalfToFloat(static_cast<uint16_t>(i)))) {
      ASSERT_TRUE(std::isnan(HalfToFloat(back16[i]))) << std::hex << i;
    } else {
      ASSERT_EQ(back16[i], i) << std::hex << i;
    }
    if (std::isnan(Bf16ToFloat(static_cast<uint16_t>(i)))) {
      ASSERT_TRUE(std::isnan(Bf16ToFloat(backbf[i]))) << std::hex << i;
    } else {
      ASSERT_EQ(backbf[i], i) << std::hex << i;
    }
  }
}

TEST(RoundTripTest, ShortestFloatTextIsCompact) {
  // 150 K random image-like values: the JSON stays near 10-11 bytes per element.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-2.5f, 2.5f);
  std::vector<float> values(150528);
  for (float& v : values) v = dist(rng);
  InferResponse response;
  response.outputs = {MakeTensor("img", DataType::kFp32, {1, 3, 224, 224}, Bytes(values))};
  absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(response, {});
  ASSERT_TRUE(encoded.ok());
  EXPECT_LT(encoded->body.size(), values.size() * 12);
}

TEST(RoundTripTest, BytesWithNulsAndNonUtf8) {
  const std::vector<std::string> elements = {std::string("\0\0", 2), "\xc3\x28", "fine"};
  const std::string bytes = SerializeBytes(elements);
  const std::string json = StrCat(R"({"inputs":[{"name":"s","shape":[3],"datatype":"BYTES",)",
                                  R"("parameters":{"binary_data_size":)", bytes.size(), "}}]}");
  absl::StatusOr<InferRequest> request =
      DecodeInferRequest(json + bytes, json.size(), kMaxElements);
  ASSERT_TRUE(request.ok()) << request.status();
  // JSON was asked for, but one element is not UTF-8: the output goes binary.
  absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(Echo(*request), {});
  ASSERT_TRUE(encoded.ok());
  ASSERT_TRUE(encoded->json_header_length.has_value());
  EXPECT_EQ(encoded->body.substr(*encoded->json_header_length), bytes);
}

}  // namespace
}  // namespace infera
