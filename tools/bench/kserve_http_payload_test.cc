#include "tools/bench/kserve_http_payload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "codec/kserve_http_codec.h"

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

Tensor Int32Tensor(std::string name, std::vector<int32_t> values, Shape shape) {
  return Tensor{std::move(name), DataType::kInt32, std::move(shape), Buffer::Copy(values.data(), values.size() * 4)};
}

// Splits a request into head and body.
std::pair<std::string, std::string> Split(const std::string& request) {
  const size_t end = request.find("\r\n\r\n");
  return {request.substr(0, end + 4), request.substr(end + 4)};
}

TEST(KServeHttpPayloadTest, JsonRequestDecodesOnTheServer) {
  KServeHttpTarget target{"127.0.0.1:8000", "simple", "", false, false};
  const std::vector<Tensor> inputs = {Int32Tensor("INPUT0", {1, 2, 3, 4}, {1, 4}),
                                      Int32Tensor("INPUT1", {5, 6, 7, -8}, {1, 4})};
  auto [head, body] = Split(EncodeInferHttpRequest(target, inputs));
  EXPECT_THAT(head, HasSubstr("POST /v2/models/simple/infer HTTP/1.1\r\n"));
  EXPECT_THAT(head, HasSubstr("Host: 127.0.0.1:8000\r\n"));
  EXPECT_THAT(head, HasSubstr("Content-Type: application/json\r\n"));
  EXPECT_THAT(head, HasSubstr("Content-Length: " + std::to_string(body.size()) + "\r\n"));
  // The server's own decoder is the reference for what a valid body is.
  auto decoded = DecodeInferRequest(body, std::nullopt, 1 << 20);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->inputs.size(), 2u);
  EXPECT_EQ(decoded->inputs[1].name, "INPUT1");
  EXPECT_EQ(decoded->inputs[1].shape, (Shape{1, 4}));
  EXPECT_EQ(decoded->inputs[1].data.AsStringView(), inputs[1].data.AsStringView());
}

TEST(KServeHttpPayloadTest, BinaryRequestDecodesOnTheServer) {
  KServeHttpTarget target{"h:1", "my model", "2", true, true};
  const std::vector<Tensor> inputs = {Int32Tensor("INPUT0", {1, 2, 3, 4}, {4})};
  auto [head, body] = Split(EncodeInferHttpRequest(target, inputs));
  EXPECT_THAT(head, HasSubstr("POST /v2/models/my%20model/versions/2/infer HTTP/1.1\r\n"));
  const size_t at = head.find("Inference-Header-Content-Length: ");
  ASSERT_NE(at, std::string::npos);
  const size_t json_size = std::stoul(head.substr(at + 33));
  EXPECT_EQ(body.size(), json_size + 16);
  EXPECT_THAT(body.substr(0, json_size), HasSubstr("\"binary_data_output\":true"));
  auto decoded = DecodeInferRequest(body, json_size, 1 << 20);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->inputs[0].data.AsStringView(), inputs[0].data.AsStringView());
}

TEST(KServeHttpPayloadTest, DecodesServerResponsesJsonAndBinary) {
  InferResponse response;
  response.model_name = "simple";
  response.model_version = 1;
  response.outputs = {Int32Tensor("OUTPUT0", {3, 4}, {1, 2}), Int32Tensor("OUTPUT1", {-1, 0}, {1, 2})};
  for (bool binary : {false, true}) {
    InferRequest request;
    if (binary) request.parameters["binary_data_output"] = true;
    auto encoded = EncodeInferResponse(response, OutputEncoding::FromRequest(request));
    ASSERT_TRUE(encoded.ok());
    auto outputs = DecodeInferHttpResponse(encoded->body, encoded->json_header_length);
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    ASSERT_EQ(outputs->size(), 2u);
    EXPECT_EQ((*outputs)[1].name, "OUTPUT1");
    EXPECT_EQ((*outputs)[1].shape, (Shape{1, 2}));
    EXPECT_EQ((*outputs)[1].data.AsStringView(), response.outputs[1].data.AsStringView()) << binary;
  }
}

TEST(KServeHttpPayloadTest, MalformedResponses) {
  EXPECT_FALSE(DecodeInferHttpResponse("not json", std::nullopt).ok());
  EXPECT_FALSE(DecodeInferHttpResponse(R"({"outputs":[{"name":"x"}]})", std::nullopt).ok());
  EXPECT_FALSE(DecodeInferHttpResponse(R"({"outputs":[{"name":"x","datatype":"INT32","shape":[2],"data":[1]}]})",
                                       std::nullopt).ok());
  EXPECT_FALSE(DecodeInferHttpResponse("{}", 100).ok());
  EXPECT_FALSE(DecodeInferHttpResponse(
                   R"({"outputs":[{"name":"x","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":4}}]})",
                   std::nullopt)
                   .ok());
}

}  // namespace
}  // namespace infera::bench
