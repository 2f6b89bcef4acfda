// The gRPC codec's part of the system shared-memory extension.
#include "grpc/infer_message_codec.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using inference::ModelInferRequest;
using inference::ModelInferResponse;

void AddShmInput(ModelInferRequest& m, const std::string& name, int64_t byte_size) {
  auto* input = m.add_inputs();
  input->set_name(name);
  input->set_datatype("INT32");
  input->add_shape(4);
  (*input->mutable_parameters())["shared_memory_region"].set_string_param("in");
  (*input->mutable_parameters())["shared_memory_byte_size"].set_int64_param(byte_size);
}

void AddRawInput(ModelInferRequest& m, const std::string& name) {
  auto* input = m.add_inputs();
  input->set_name(name);
  input->set_datatype("INT32");
  input->add_shape(4);
  m.add_raw_input_contents(std::string(16, '\1'));
}

TEST(InferMessageCodecShmTest, RawContentsSkipInputsInSharedMemory) {
  ModelInferRequest m;
  m.set_model_name("simple");
  AddRawInput(m, "a");
  AddShmInput(m, "b", 16);
  AddRawInput(m, "c");
  auto request = DecodeModelInferRequest(m, nullptr);
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_EQ(request->inputs.size(), 3u);
  EXPECT_EQ(request->inputs[0].data.size(), 16u);
  EXPECT_TRUE(request->inputs[1].data.empty());
  EXPECT_EQ(request->inputs[2].data.size(), 16u);
  ASSERT_EQ(request->input_parameters.size(), 3u);
  EXPECT_TRUE(request->input_parameters[0].empty());
  EXPECT_EQ(GetStringParameter(request->input_parameters[1], "shared_memory_region"), "in");
  EXPECT_EQ(GetIntParameter(request->input_parameters[1], "shared_memory_byte_size"), 16);
}

TEST(InferMessageCodecShmTest, RawEntryForAnInputInSharedMemoryIsACountMismatch) {
  ModelInferRequest m;
  m.set_model_name("simple");
  AddShmInput(m, "b", 16);
  m.add_raw_input_contents(std::string(16, '\1'));
  auto request = DecodeModelInferRequest(m, nullptr);
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(request.status().message()), testing::HasSubstr("not in shared memory"));
}

TEST(InferMessageCodecShmTest, TypedContentsWithARegionAreRefused) {
  ModelInferRequest m;
  m.set_model_name("simple");
  AddShmInput(m, "b", 16);
  for (int i = 0; i < 4; ++i) m.mutable_inputs(0)->mutable_contents()->add_int_contents(i);
  EXPECT_EQ(DecodeModelInferRequest(m, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InferMessageCodecShmTest, SharedMemoryOutputHasParametersAndAnEmptyRawEntry) {
  InferResponse response;
  response.model_name = "simple";
  response.model_version = 1;
  response.outputs.push_back(Tensor{"y", DataType::kInt32, {4}, Buffer()});
  response.outputs.push_back(Tensor{"z", DataType::kInt32, {1}, Buffer::Copy("\x05\0\0\0", 4)});
  Parameters echo;
  echo.emplace("shared_memory_region", std::string("out"));
  echo.emplace("shared_memory_byte_size", int64_t{16});
  response.shared_memory_outputs = {echo, std::nullopt};
  ModelInferResponse raw;
  ASSERT_TRUE(EncodeModelInferResponse(response, &raw).ok());
  ASSERT_EQ(raw.raw_output_contents_size(), 2);
  EXPECT_EQ(raw.raw_output_contents(0), "");
  EXPECT_EQ(raw.raw_output_contents(1).size(), 4u);
  EXPECT_EQ(raw.outputs(0).parameters().at("shared_memory_region").string_param(), "out");
  EXPECT_EQ(raw.outputs(0).parameters().at("shared_memory_byte_size").int64_param(), 16);
}

}  // namespace
}  // namespace infera
