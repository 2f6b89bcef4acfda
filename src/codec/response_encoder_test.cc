#include "codec/response_encoder.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "api/float16.h"
#include "codec/codec_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using testing_util::Bytes;
using testing_util::MakeTensor;
using testing_util::ParseJson;
using testing_util::SerializeBytes;

InferResponse MakeResponse(std::vector<Tensor> outputs) {
  InferResponse response;
  response.model_name = "simple";
  response.model_version = 3;
  response.outputs = std::move(outputs);
  return response;
}

EncodedInferResponse Encode(const InferResponse& response, OutputEncoding encoding = {}) {
  absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(response, encoding);
  EXPECT_TRUE(encoded.ok()) << encoded.status();
  return encoded.ok() ? *std::move(encoded) : EncodedInferResponse{};
}

TEST(EncodeResponseTest, JsonOutputsExactText) {
  InferResponse response = MakeResponse(
      {MakeTensor("OUTPUT0", DataType::kInt32, {1, 3}, Bytes(std::vector<int32_t>{1, -2, 3})),
       MakeTensor("f", DataType::kFp32, {4},
                  Bytes(std::vector<float>{0.1f, 1.0f, 1e30f, -2.5e-7f})),
       MakeTensor("b", DataType::kBool, {2}, std::string("\x01\x00", 2))});
  EncodedInferResponse encoded = Encode(response);
  EXPECT_EQ(encoded.body,
            R"({"model_name":"simple","model_version":"3","outputs":[)"
            R"({"name":"OUTPUT0","datatype":"INT32","shape":[1,3],"data":[1,-2,3]},)"
            R"({"name":"f","datatype":"FP32","shape":[4],"data":[0.1,1,1e+30,-2.5e-07]},)"
            R"({"name":"b","datatype":"BOOL","shape":[2],"data":[true,false]}]})");
  EXPECT_FALSE(encoded.json_header_length.has_value());
}

TEST(EncodeResponseTest, IdAndParametersOnlyWhenPresent) {
  InferResponse response = MakeResponse({});
  response.id = "req-\"7\"";
  response.parameters["b"] = true;
  response.parameters["i"] = int64_t{-4};
  response.parameters["d"] = 0.25;
  response.parameters["s"] = std::string("text");
  EncodedInferResponse encoded = Encode(response);
  EXPECT_EQ(encoded.body, R"({"model_name":"simple","model_version":"3","id":"req-\"7\"",)"
                          R"("parameters":{"b":true,"d":0.25,"i":-4,"s":"text"},"outputs":[]})");
}

TEST(EncodeResponseTest, NonFiniteFloatsUseNanAndInfinityTokens) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  InferResponse response = MakeResponse(
      {MakeTensor("f", DataType::kFp32, {3}, Bytes(std::vector<float>{nan, INFINITY, -INFINITY})),
       MakeTensor("d", DataType::kFp64, {2}, Bytes(std::vector<double>{-NAN, -INFINITY})),
       MakeTensor("h", DataType::kFp16, {2}, Bytes(std::vector<uint16_t>{0x7e00, 0xfc00})),
       MakeTensor("bf", DataType::kBf16, {2}, Bytes(std::vector<uint16_t>{0x7f80, 0xffc0}))});
  const std::string body = Encode(response).body;
  EXPECT_THAT(body, HasSubstr(R"("data":[NaN,Infinity,-Infinity])"));
  EXPECT_THAT(body, HasSubstr(R"("data":[NaN,-Infinity])"));
  EXPECT_THAT(body,
              HasSubstr(R"("name":"bf","datatype":"BF16","shape":[2],"data":[Infinity,NaN])"));
  rapidjson::Document doc = ParseJson(body);
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_TRUE(std::isnan(doc["outputs"][0]["data"][0].GetDouble()));
}

TEST(EncodeResponseTest, HalfAndBfloat16AreWrittenAsNumbers) {
  InferResponse response = MakeResponse(
      {MakeTensor("h", DataType::kFp16, {3}, Bytes(std::vector<uint16_t>{0x3c00, 0x3555, 0x0001})),
       MakeTensor("b", DataType::kBf16, {2}, Bytes(std::vector<uint16_t>{0x4049, 0xbf80}))});
  const std::string body = Encode(response).body;
  EXPECT_THAT(body, HasSubstr(R"("data":[1,0.33325195,5.9604645e-08])"));
  EXPECT_THAT(body, HasSubstr(R"("data":[3.140625,-1])"));
}

TEST(EncodeResponseTest, IntegerExtremes) {
  InferResponse response = MakeResponse(
      {MakeTensor("i", DataType::kInt64, {2}, Bytes(std::vector<int64_t>{INT64_MIN, INT64_MAX})),
       MakeTensor("u", DataType::kUint64, {1}, Bytes(std::vector<uint64_t>{UINT64_MAX})),
       MakeTensor("i8", DataType::kInt8, {2}, Bytes(std::vector<int8_t>{-128, 127})),
       MakeTensor("u8", DataType::kUint8, {1}, Bytes(std::vector<uint8_t>{255})),
       MakeTensor("i16", DataType::kInt16, {1}, Bytes(std::vector<int16_t>{-32768})),
       MakeTensor("u16", DataType::kUint16, {1}, Bytes(std::vector<uint16_t>{65535})),
       MakeTensor("u32", DataType::kUint32, {1}, Bytes(std::vector<uint32_t>{4294967295u}))});
  const std::string body = Encode(response).body;
  EXPECT_THAT(body, HasSubstr("[-9223372036854775808,9223372036854775807]"));
  EXPECT_THAT(body, HasSubstr("[18446744073709551615]"));
  EXPECT_THAT(body, HasSubstr("[-128,127]"));
  EXPECT_THAT(body, HasSubstr("[255]"));
  EXPECT_THAT(body, HasSubstr("[-32768]"));
  EXPECT_THAT(body, HasSubstr("[65535]"));
  EXPECT_THAT(body, HasSubstr("[4294967295]"));
}

TEST(EncodeResponseTest, BytesAsJsonStrings) {
  const std::string with_nul("a\0b", 3);
  InferResponse response = MakeResponse(
      {MakeTensor("s", DataType::kBytes, {4},
                  SerializeBytes({"plain", with_nul, "q\"\\\n\t\x01", "caf\xc3\xa9"}))});
  EncodedInferResponse encoded = Encode(response);
  EXPECT_FALSE(encoded.json_header_length.has_value());
  EXPECT_THAT(encoded.body, HasSubstr(R"("data":["plain","a\u0000b","q\"\\\n\t\u0001","caf)"
                                      "\xc3\xa9"
                                      R"("])"));
  rapidjson::Document doc = ParseJson(encoded.body);
  ASSERT_FALSE(doc.HasParseError());
  const rapidjson::Value& data = doc["outputs"][0]["data"];
  EXPECT_EQ(std::string(data[1].GetString(), data[1].GetStringLength()), with_nul);
}

TEST(EncodeResponseTest, NonUtf8BytesOutputFallsBackToBinary) {
  const std::string bytes = SerializeBytes({"ok", "\xff\xfe"});
  InferResponse response =
      MakeResponse({MakeTensor("s", DataType::kBytes, {2}, bytes),
                    MakeTensor("i", DataType::kInt32, {1}, Bytes(std::vector<int32_t>{5}))});
  EncodedInferResponse encoded = Encode(response);
  ASSERT_TRUE(encoded.json_header_length.has_value());
  const std::string json = encoded.body.substr(0, *encoded.json_header_length);
  EXPECT_EQ(json,
            R"({"model_name":"simple","model_version":"3","outputs":[)"
            R"({"name":"s","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":)" +
                std::to_string(bytes.size()) +
                R"(}},)"
                R"({"name":"i","datatype":"INT32","shape":[1],"data":[5]}]})");
  EXPECT_EQ(encoded.body.substr(*encoded.json_header_length), bytes);
}

TEST(EncodeResponseTest, BinaryOutputsFollowTheJsonInOrder) {
  const std::string a = Bytes(std::vector<float>{1, 2, 3});
  const std::string c = Bytes(std::vector<int16_t>{-1});
  InferResponse response =
      MakeResponse({MakeTensor("a", DataType::kFp32, {3}, a),
                    MakeTensor("b", DataType::kInt32, {1}, Bytes(std::vector<int32_t>{7})),
                    MakeTensor("c", DataType::kInt16, {1}, c)});
  OutputEncoding encoding;
  encoding.binary_by_default = true;
  encoding.overrides = {{"b", false}};
  EncodedInferResponse encoded = Encode(response, encoding);
  ASSERT_TRUE(encoded.json_header_length.has_value());
  const size_t json_size = *encoded.json_header_length;
  rapidjson::Document doc = ParseJson(std::string_view(encoded.body).substr(0, json_size));
  ASSERT_FALSE(doc.HasParseError());
  const rapidjson::Value& outputs = doc["outputs"];
  EXPECT_EQ(outputs[0]["parameters"]["binary_data_size"].GetUint64(), a.size());
  EXPECT_FALSE(outputs[0].HasMember("data"));
  EXPECT_EQ(outputs[1]["data"][0].GetInt(), 7);
  EXPECT_FALSE(outputs[1].HasMember("parameters"));
  EXPECT_EQ(outputs[2]["parameters"]["binary_data_size"].GetUint64(), c.size());
  EXPECT_EQ(encoded.body.substr(json_size), a + c);
}

TEST(EncodeResponseTest, EmptyBinaryOutputStillSetsTheHeaderLength) {
  InferResponse response = MakeResponse({MakeTensor("e", DataType::kFp32, {0}, "")});
  OutputEncoding encoding;
  encoding.binary_by_default = true;
  EncodedInferResponse encoded = Encode(response, encoding);
  ASSERT_TRUE(encoded.json_header_length.has_value());
  EXPECT_EQ(*encoded.json_header_length, encoded.body.size());
  EXPECT_THAT(encoded.body, HasSubstr(R"("parameters":{"binary_data_size":0})"));
}

TEST(EncodeResponseTest, InconsistentOutputIsAnInternalError) {
  InferResponse response =
      MakeResponse({MakeTensor("bad", DataType::kFp32, {4}, std::string(15, '\0'))});
  absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(response, {});
  EXPECT_EQ(encoded.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(encoded.status().message(), HasSubstr("output 'bad' of model 'simple'"));
  EXPECT_THAT(encoded.status().message(), HasSubstr("15 bytes"));

  response = MakeResponse({MakeTensor("s", DataType::kBytes, {2}, SerializeBytes({"a"}))});
  EXPECT_EQ(EncodeInferResponse(response, {}).status().code(), absl::StatusCode::kInternal);
}

TEST(EncodeResponseTest, LargeOutputsGrowPastTheEstimate) {
  // Strings full of control characters expand 6x when escaped, beyond the size estimate.
  const std::string control(100000, '\x01');
  InferResponse response =
      MakeResponse({MakeTensor("s", DataType::kBytes, {1}, SerializeBytes({control}))});
  EncodedInferResponse encoded = Encode(response);
  rapidjson::Document doc = ParseJson(encoded.body);
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_EQ(doc["outputs"][0]["data"][0].GetStringLength(), control.size());
}

}  // namespace
}  // namespace infera
