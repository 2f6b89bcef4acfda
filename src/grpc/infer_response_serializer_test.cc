// SerializeInferResponse against protobuf's own parser and against
// EncodeModelInferResponse (the message the answer must equal), for both framings, with
// large outputs referenced (the slice's bytes *are* the output's Buffer) and small ones
// copied.
#include "grpc/infer_response_serializer.h"

#include <cstring>
#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "grpc/infer_message_codec.h"
#include "grpc_service.pb.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using google::protobuf::util::MessageDifferencer;
using inference::ModelInferResponse;
using inference::ModelStreamInferResponse;

Tensor Fp32(const std::string& name, size_t elements, float base) {
  uint8_t* data = nullptr;
  Buffer buffer = Buffer::Allocate(elements * 4, &data);
  for (size_t i = 0; i < elements; ++i) {
    const float value = base + static_cast<float>(i);
    std::memcpy(data + 4 * i, &value, 4);
  }
  return Tensor{name, DataType::kFp32, {static_cast<int64_t>(elements)}, std::move(buffer)};
}

// Small INT32, a large FP32 (referenced), BYTES, another small one, response parameters.
InferResponse Mixed() {
  InferResponse response;
  response.model_name = "m";
  response.model_version = 3;
  response.id = "req-7";
  response.parameters.emplace("sequence_end", true);
  response.outputs.push_back(Tensor{"small", DataType::kInt32, {2}, Buffer::Copy("\x01\0\0\0\x02\0\0\0", 8)});
  response.outputs.push_back(Fp32("large", 150528, 0.5f));  // identity_fp32's 602,112 bytes
  response.outputs.push_back(Tensor{"text", DataType::kBytes, {1}, Buffer::Copy("\x02\0\0\0hi", 6)});
  response.outputs.push_back(Fp32("edge", kReferenceBytes / 4, 1.0f));  // exactly the threshold
  return response;
}

template <typename Message>
Message Parse(grpc::ByteBuffer buffer) {
  Message message;
  grpc::Status status = grpc::SerializationTraits<Message>::Deserialize(&buffer, &message);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return message;
}

ModelInferResponse Expected(const InferResponse& response) {
  ModelInferResponse expected;
  EXPECT_TRUE(EncodeModelInferResponse(response, &expected).ok());
  return expected;
}

// Whether one slice of `buffer` starts at `data` (the bytes were referenced, not copied).
bool References(const grpc::ByteBuffer& buffer, const Buffer& data) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  for (const grpc::Slice& slice : slices) {
    if (slice.begin() == data.data() && slice.size() == data.size()) return true;
  }
  return false;
}

TEST(InferResponseSerializerTest, UnaryAnswerIsTheEncodedMessageWithLargeOutputsReferenced) {
  const InferResponse response = Mixed();
  absl::StatusOr<grpc::ByteBuffer> buffer = SerializeInferResponse(response, ResponseFraming::kUnary, 64 << 20);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_TRUE(References(*buffer, response.outputs[1].data));
  EXPECT_TRUE(References(*buffer, response.outputs[3].data));
  EXPECT_FALSE(References(*buffer, response.outputs[0].data));  // small: copied
  const ModelInferResponse expected = Expected(response);
  EXPECT_EQ(buffer->Length(), expected.ByteSizeLong());
  const ModelInferResponse parsed = Parse<ModelInferResponse>(*buffer);
  EXPECT_TRUE(MessageDifferencer::Equals(parsed, expected)) << parsed.ShortDebugString().substr(0, 300);
  EXPECT_EQ(parsed.raw_output_contents(1), response.outputs[1].data.AsStringView());
}

TEST(InferResponseSerializerTest, StreamAnswerCarriesItAsInferResponse) {
  const InferResponse response = Mixed();
  absl::StatusOr<grpc::ByteBuffer> buffer = SerializeInferResponse(response, ResponseFraming::kStream, 64 << 20);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_TRUE(References(*buffer, response.outputs[1].data));
  const ModelStreamInferResponse parsed = Parse<ModelStreamInferResponse>(*buffer);
  EXPECT_EQ(parsed.error_message(), "");
  EXPECT_TRUE(MessageDifferencer::Equals(parsed.infer_response(), Expected(response)));
}

TEST(InferResponseSerializerTest, SmallAnswersAreOneCopiedSlice) {
  InferResponse response;
  response.model_name = "simple";
  response.model_version = 1;
  response.outputs.push_back(Tensor{"OUTPUT0", DataType::kInt32, {1, 16}, Buffer::Copy(std::string(64, 'a').data(), 64)});
  response.outputs.push_back(Tensor{"OUTPUT1", DataType::kInt32, {1, 16}, Buffer::Copy(std::string(64, 'b').data(), 64)});
  for (ResponseFraming framing : {ResponseFraming::kUnary, ResponseFraming::kStream}) {
    absl::StatusOr<grpc::ByteBuffer> buffer = SerializeInferResponse(response, framing, 1 << 20);
    ASSERT_TRUE(buffer.ok());
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(buffer->Dump(&slices).ok());
    EXPECT_EQ(slices.size(), 1u);
    ModelInferResponse parsed = framing == ResponseFraming::kUnary
                                    ? Parse<ModelInferResponse>(*buffer)
                                    : Parse<ModelStreamInferResponse>(*buffer).infer_response();
    EXPECT_TRUE(MessageDifferencer::Equals(parsed, Expected(response)));
  }
}

TEST(InferResponseSerializerTest, ReferencedOutputsOutliveTheResponse) {
  absl::StatusOr<grpc::ByteBuffer> buffer;
  std::string expected;
  {
    InferResponse response;
    response.model_name = "identity";
    response.outputs.push_back(Fp32("y", 10000, 2.0f));
    expected = std::string(response.outputs[0].data.AsStringView());
    buffer = SerializeInferResponse(response, ResponseFraming::kUnary, 1 << 20);
    ASSERT_TRUE(buffer.ok());
  }  // the response and its Buffer handle are gone; the slice still holds the bytes
  EXPECT_EQ(Parse<ModelInferResponse>(*buffer).raw_output_contents(0), expected);
}

TEST(InferResponseSerializerTest, SharedMemoryOutputsHaveAnEmptyEntry) {
  InferResponse response;
  response.model_name = "identity";
  response.outputs.push_back(Tensor{"in_shm", DataType::kFp32, {1024}, Buffer()});
  response.outputs.push_back(Fp32("y", 2048, 0.0f));
  Parameters region;
  region.emplace("shared_memory_region", std::string("out"));
  response.shared_memory_outputs = {region, std::nullopt};
  absl::StatusOr<grpc::ByteBuffer> buffer = SerializeInferResponse(response, ResponseFraming::kUnary, 1 << 20);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  const ModelInferResponse parsed = Parse<ModelInferResponse>(*buffer);
  EXPECT_TRUE(MessageDifferencer::Equals(parsed, Expected(response)));
  ASSERT_EQ(parsed.raw_output_contents_size(), 2);
  EXPECT_EQ(parsed.raw_output_contents(0), "");
  EXPECT_EQ(parsed.outputs(0).parameters().at("shared_memory_region").string_param(), "out");
}

TEST(InferResponseSerializerTest, TheLimitIsTheModelInferResponseSize) {
  const InferResponse response = Mixed();
  const uint64_t size = Expected(response).ByteSizeLong();
  for (ResponseFraming framing : {ResponseFraming::kUnary, ResponseFraming::kStream}) {
    EXPECT_TRUE(SerializeInferResponse(response, framing, size).ok());
    absl::StatusOr<grpc::ByteBuffer> over = SerializeInferResponse(response, framing, size - 1);
    EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(over.status().message().find("--grpc-max-message-bytes"), std::string::npos);
    EXPECT_NE(over.status().message().find(std::to_string(size)), std::string::npos);
  }
}

TEST(InferResponseSerializerTest, OutputBytesThatDoNotMatchTheShapeAreInternal) {
  InferResponse response;
  response.model_name = "m";
  response.outputs.push_back(Tensor{"y", DataType::kFp32, {4}, Buffer::Copy("abc", 3)});
  absl::StatusOr<grpc::ByteBuffer> buffer = SerializeInferResponse(response, ResponseFraming::kUnary, 1 << 20);
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(buffer.status().message().find("output 'y'"), std::string::npos);
}

}  // namespace
}  // namespace infera
