// The HTTP codec's part of the system shared-memory extension: data-less inputs that name
// a region, and outputs written into one.
#include <string>

#include "codec/request_decoder.h"
#include "codec/response_encoder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

TEST(CodecSharedMemoryTest, DataLessInputNamingARegionKeepsItsParameters) {
  auto request = DecodeInferRequest(
      R"({"inputs":[{"name":"a","shape":[2],"datatype":"FP32","data":[1,2]},)"
      R"({"name":"b","shape":[1,16],"datatype":"INT32","parameters":)"
      R"({"shared_memory_region":"in","shared_memory_byte_size":64,"shared_memory_offset":8}},)"
      R"({"name":"c","shape":[1],"datatype":"FP32","data":[3]}]})",
      std::nullopt, 1024);
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_EQ(request->inputs.size(), 3u);
  ASSERT_EQ(request->input_parameters.size(), 3u);
  EXPECT_TRUE(request->input_parameters[0].empty());
  EXPECT_TRUE(request->inputs[1].data.empty());
  EXPECT_EQ(GetStringParameter(request->input_parameters[1], "shared_memory_region"), "in");
  EXPECT_EQ(GetIntParameter(request->input_parameters[1], "shared_memory_byte_size"), 64);
  EXPECT_EQ(GetIntParameter(request->input_parameters[1], "shared_memory_offset"), 8);
  EXPECT_EQ(request->inputs[2].data.size(), 4u);
}

TEST(CodecSharedMemoryTest, RequestsWithoutRegionsKeepNoInputParameters) {
  auto request = DecodeInferRequest(
      R"({"inputs":[{"name":"a","shape":[1],"datatype":"FP32","data":[1],"parameters":{"x":1}}]})",
      std::nullopt, 1024);
  ASSERT_TRUE(request.ok());
  EXPECT_TRUE(request->input_parameters.empty());
}

TEST(CodecSharedMemoryTest, RegionWithDataOrBinaryIsRefused) {
  auto with_data = DecodeInferRequest(
      R"({"inputs":[{"name":"a","shape":[1],"datatype":"FP32","data":[1],)"
      R"("parameters":{"shared_memory_region":"in","shared_memory_byte_size":4}}]})",
      std::nullopt, 1024);
  EXPECT_EQ(with_data.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(with_data.status().message()), HasSubstr("shared_memory_region"));
  const std::string json =
      R"({"inputs":[{"name":"a","shape":[1],"datatype":"FP32","parameters":)"
      R"({"shared_memory_region":"in","shared_memory_byte_size":4,"binary_data_size":4}}]})";
  auto with_binary = DecodeInferRequest(json + "abcd", json.size(), 1024);
  EXPECT_EQ(with_binary.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CodecSharedMemoryTest, SharedMemoryOutputHasParametersAndNoData) {
  InferResponse response;
  response.model_name = "m";
  response.model_version = 1;
  response.outputs.push_back(Tensor{"y", DataType::kFp32, {1, 4}, Buffer()});
  response.outputs.push_back(Tensor{"z", DataType::kInt32, {1}, Buffer::Copy("\x05\0\0\0", 4)});
  Parameters echo;
  echo.emplace("shared_memory_region", std::string("out"));
  echo.emplace("shared_memory_byte_size", int64_t{16});
  response.shared_memory_outputs = {echo, std::nullopt};
  auto encoded = EncodeInferResponse(response, OutputEncoding{});
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  EXPECT_EQ(encoded->body,
            R"({"model_name":"m","model_version":"1","outputs":[)"
            R"({"name":"y","datatype":"FP32","shape":[1,4],"parameters":)"
            R"({"shared_memory_byte_size":16,"shared_memory_region":"out"}},)"
            R"({"name":"z","datatype":"INT32","shape":[1],"data":[5]}]})");
  EXPECT_FALSE(encoded->json_header_length.has_value());
}

}  // namespace
}  // namespace infera
