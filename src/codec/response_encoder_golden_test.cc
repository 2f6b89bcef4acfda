// Golden test: EncodeInferResponse writes the JSON structure by hand (response_encoder.cc);
// before, rapidjson::Writer wrote it. This test keeps that Writer-based form as the
// reference and checks that both produce the same bytes for every datatype, ids and names
// needing escapes (control characters, quotes, NULs, non-ASCII bytes), parameters of
// every type (doubles included: rapidjson's dtoa, NaN / Infinity), binary outputs and
// shared-memory outputs — so clients see byte-identical answers.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "api/float16.h"
#include "codec/codec_test_util.h"
#include "codec/json_data_writer.h"
#include "codec/json_string_stream.h"
#include "codec/response_encoder.h"
#include "common/json_writer.h"
#include "gtest/gtest.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using testing_util::Bytes;
using testing_util::MakeTensor;
using testing_util::SerializeBytes;

// ---- the reference: the structure through rapidjson::Writer, as the encoder did -------

using JsonWriter = rapidjson::Writer<JsonStringStream, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                     rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

void RefParameters(const Parameters& parameters, JsonWriter& writer) {
  writer.StartObject();
  for (const auto& [key, value] : parameters) {
    WriteString(writer, key);
    if (const bool* b = std::get_if<bool>(&value)) {
      writer.Bool(*b);
    } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
      writer.Int64(*i);
    } else if (const double* d = std::get_if<double>(&value)) {
      writer.Double(*d);
    } else {
      WriteString(writer, std::get<std::string>(value));
    }
  }
  writer.EndObject();
}

void RefHeader(const Tensor& output, JsonWriter& writer) {
  writer.Key("name");
  WriteString(writer, output.name);
  writer.Key("datatype");
  WriteString(writer, DataTypeName(output.dtype));
  writer.Key("shape");
  writer.StartArray();
  for (int64_t dim : output.shape) writer.Int64(dim);
  writer.EndArray();
}

// `binary[i]`: output i is sent binary (the encoder decides; here the test says).
std::string ReferenceEncode(const InferResponse& response, const std::vector<bool>& binary) {
  std::string body;
  {
    JsonStringStream stream(&body, 256);
    JsonWriter writer(stream);
    writer.StartObject();
    writer.Key("model_name");
    WriteString(writer, response.model_name);
    writer.Key("model_version");
    WriteString(writer, std::to_string(response.model_version));
    if (!response.id.empty()) {
      writer.Key("id");
      WriteString(writer, response.id);
    }
    if (!response.parameters.empty()) {
      writer.Key("parameters");
      RefParameters(response.parameters, writer);
    }
    writer.Key("outputs");
    writer.StartArray();
    for (size_t i = 0; i < response.outputs.size(); ++i) {
      const Tensor& output = response.outputs[i];
      writer.StartObject();
      RefHeader(output, writer);
      if (i < response.shared_memory_outputs.size() && response.shared_memory_outputs[i]) {
        writer.Key("parameters");
        RefParameters(*response.shared_memory_outputs[i], writer);
      } else if (binary[i]) {
        writer.Key("parameters");
        writer.StartObject();
        writer.Key("binary_data_size");
        writer.Uint64(output.data.size());
        writer.EndObject();
      } else {
        writer.Key("data");
        writer.RawValue("", 0, rapidjson::kArrayType);
        WriteJsonData(output, stream);
      }
      writer.EndObject();
    }
    writer.EndArray();
    writer.EndObject();
    stream.Finish();
  }
  for (size_t i = 0; i < response.outputs.size(); ++i) {
    const bool shm = i < response.shared_memory_outputs.size() && response.shared_memory_outputs[i];
    if (binary[i] && !shm) body.append(response.outputs[i].data.AsStringView());
  }
  return body;
}

// ---- cases --------------------------------------------------------------------------

void ExpectSameBytes(const InferResponse& response, const OutputEncoding& encoding, const std::vector<bool>& binary) {
  absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(response, encoding);
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  EXPECT_EQ(encoded->body, ReferenceEncode(response, binary));
}

InferResponse Base() {
  InferResponse response;
  response.model_name = "simple";
  response.model_version = 1;
  return response;
}

TEST(ResponseEncoderGoldenTest, SimpleAsServedOverHttp) {
  InferResponse response = Base();
  std::vector<int32_t> sum(16), diff(16);
  for (int i = 0; i < 16; ++i) {
    sum[i] = i + 1;
    diff[i] = i - 1;
  }
  response.outputs.push_back(MakeTensor("OUTPUT0", DataType::kInt32, {1, 16}, Bytes(sum)));
  response.outputs.push_back(MakeTensor("OUTPUT1", DataType::kInt32, {1, 16}, Bytes(diff)));
  ExpectSameBytes(response, {}, {false, false});
  response.id = "request-42";
  response.model_version = 9223372036854775807;
  ExpectSameBytes(response, {}, {false, false});
}

TEST(ResponseEncoderGoldenTest, EveryDatatype) {
  InferResponse response = Base();
  response.outputs.push_back(MakeTensor("b", DataType::kBool, {3}, std::string("\x01\x00\x01", 3)));
  response.outputs.push_back(MakeTensor("u8", DataType::kUint8, {2}, Bytes(std::vector<uint8_t>{0, 255})));
  response.outputs.push_back(MakeTensor("u16", DataType::kUint16, {2}, Bytes(std::vector<uint16_t>{0, 65535})));
  response.outputs.push_back(MakeTensor("u32", DataType::kUint32, {1}, Bytes(std::vector<uint32_t>{4294967295u})));
  response.outputs.push_back(MakeTensor("u64", DataType::kUint64, {1}, Bytes(std::vector<uint64_t>{UINT64_MAX})));
  response.outputs.push_back(MakeTensor("i8", DataType::kInt8, {2}, Bytes(std::vector<int8_t>{-128, 127})));
  response.outputs.push_back(MakeTensor("i16", DataType::kInt16, {1}, Bytes(std::vector<int16_t>{-32768})));
  response.outputs.push_back(MakeTensor("i64", DataType::kInt64, {2}, Bytes(std::vector<int64_t>{INT64_MIN, INT64_MAX})));
  response.outputs.push_back(MakeTensor("f16", DataType::kFp16, {1}, Bytes(std::vector<uint16_t>{FloatToHalf(0.5f)})));
  response.outputs.push_back(MakeTensor("bf16", DataType::kBf16, {1}, Bytes(std::vector<uint16_t>{FloatToBf16(-3.0f)})));
  response.outputs.push_back(MakeTensor(
      "f32", DataType::kFp32, {5},
      Bytes(std::vector<float>{0.1f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(), 1e-45f})));
  response.outputs.push_back(MakeTensor("f64", DataType::kFp64, {2}, Bytes(std::vector<double>{1e300, -0.0})));
  response.outputs.push_back(
      MakeTensor("s", DataType::kBytes, {3}, SerializeBytes({"plain", "q\"u\\o\x01\x1f\n", std::string("\0x", 2)})));
  response.outputs.push_back(MakeTensor("scalar", DataType::kInt32, {}, Bytes(std::vector<int32_t>{7})));
  response.outputs.push_back(MakeTensor("empty", DataType::kFp32, {0, 4}, ""));
  ExpectSameBytes(response, {}, std::vector<bool>(response.outputs.size(), false));
}

TEST(ResponseEncoderGoldenTest, EscapesInNamesIdsAndParameters) {
  InferResponse response = Base();
  response.model_name = "m\"odel\\\x01\x7f\xc3\xa9";
  // An embedded NUL: the length comes from the array, not from counting by hand.
  static constexpr char kId[] = "id\0\b\f\n\r\t\x1f\x10/<>\xe2\x82\xac";
  response.id = std::string(kId, sizeof(kId) - 1);
  response.parameters["b"] = false;
  response.parameters["t"] = true;
  response.parameters["i"] = int64_t{INT64_MIN};
  response.parameters["\x02key\""] = std::string("v\x1e\"");
  response.parameters["d0"] = 0.0;
  response.parameters["d1"] = 1.0;
  response.parameters["d2"] = 0.1;
  response.parameters["d3"] = 1e21;
  response.parameters["d4"] = 1e-7;
  response.parameters["d5"] = -123456.789;
  response.parameters["d6"] = std::numeric_limits<double>::quiet_NaN();
  response.parameters["d7"] = std::numeric_limits<double>::infinity();
  response.parameters["d8"] = -std::numeric_limits<double>::infinity();
  response.parameters["d9"] = std::numeric_limits<double>::denorm_min();
  response.parameters["da"] = std::numeric_limits<double>::max();
  response.parameters["db"] = -0.0;
  response.outputs.push_back(MakeTensor("o\tut", DataType::kInt32, {1}, Bytes(std::vector<int32_t>{1})));
  ExpectSameBytes(response, {}, {false});
}

TEST(ResponseEncoderGoldenTest, BinaryAndSharedMemoryOutputs) {
  InferResponse response = Base();
  response.outputs.push_back(MakeTensor("json", DataType::kInt32, {2}, Bytes(std::vector<int32_t>{1, 2})));
  response.outputs.push_back(MakeTensor("bin", DataType::kFp32, {2}, Bytes(std::vector<float>{1.5f, 2.5f})));
  response.outputs.push_back(MakeTensor("shm", DataType::kInt64, {1, 2}, ""));
  response.outputs.push_back(MakeTensor("raw", DataType::kBytes, {1}, SerializeBytes({"\xff\xfe"})));  // not UTF-8
  response.shared_memory_outputs.resize(4);
  response.shared_memory_outputs[2] =
      Parameters{{"shared_memory_region", std::string("out_region")}, {"shared_memory_byte_size", int64_t{16}}};
  InferRequest request;
  request.outputs.push_back({"json", {}});
  request.outputs.push_back({"bin", {{"binary_data", true}}});
  request.outputs.push_back({"shm", {}});
  request.outputs.push_back({"raw", {}});
  ExpectSameBytes(response, OutputEncoding::FromRequest(request), {false, true, false, true});
}

TEST(ResponseEncoderGoldenTest, RandomIdsNamesAndParameterValues) {
  std::mt19937_64 random(18);
  auto random_text = [&](size_t max_length) {
    std::string text(random() % (max_length + 1), '\0');
    for (char& c : text) c = static_cast<char>(random() % 256);
    return text;
  };
  for (int trial = 0; trial < 500; ++trial) {
    InferResponse response = Base();
    response.model_name = random_text(12);
    response.model_version = static_cast<int64_t>(random() >> 1);
    response.id = random_text(20);
    for (int p = 0; p < 3; ++p) {
      double d;
      const uint64_t bits = random();
      std::memcpy(&d, &bits, sizeof(d));
      response.parameters[random_text(6)] = d;
    }
    response.outputs.push_back(MakeTensor(random_text(8), DataType::kInt32, {static_cast<int64_t>(random() % 3)},
                                          ""));
    response.outputs.back().data =
        Buffer::FromString(Bytes(std::vector<int32_t>(static_cast<size_t>(response.outputs.back().shape[0]),
                                                      static_cast<int32_t>(random()))));
    ExpectSameBytes(response, {}, {false});
    if (::testing::Test::HasFailure()) break;
  }
}

}  // namespace
}  // namespace infera
