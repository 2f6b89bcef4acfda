#include "tools/bench/grpc_messages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

Tensor Int32Tensor(const std::string& name, std::vector<int32_t> values) {
  std::string bytes(values.size() * sizeof(int32_t), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return Tensor{name, DataType::kInt32, Shape{1, static_cast<int64_t>(values.size())},
                Buffer::FromString(std::move(bytes))};
}

TEST(GrpcMessagesTest, RequestCarriesRawContentsInInputOrder) {
  PayloadData payload;
  payload.inputs = {Int32Tensor("INPUT0", {1, 2, 3}), Int32Tensor("INPUT1", {4, 5, 6})};
  const inference::ModelInferRequest r = BuildModelInferRequest("simple", "2", payload);
  EXPECT_EQ(r.model_name(), "simple");
  EXPECT_EQ(r.model_version(), "2");
  ASSERT_EQ(r.inputs_size(), 2);
  ASSERT_EQ(r.raw_input_contents_size(), 2);
  EXPECT_EQ(r.inputs(1).name(), "INPUT1");
  EXPECT_EQ(r.inputs(1).datatype(), "INT32");
  EXPECT_THAT(std::vector<int64_t>(r.inputs(1).shape().begin(), r.inputs(1).shape().end()),
              ::testing::ElementsAre(1, 3));
  EXPECT_EQ(r.raw_input_contents(1), std::string(payload.inputs[1].data.AsStringView()));
  EXPECT_EQ(r.outputs_size(), 0);  // the server returns every output
}

TEST(GrpcMessagesTest, SharedMemoryRequestHasNoRawContents) {
  PayloadData payload;
  payload.inputs = {Int32Tensor("INPUT0", {1, 2})};
  payload.shm = PayloadShm{{{"in0", 0, 8}}, {{"OUTPUT0", {"out0", 64, 8}}}};
  const inference::ModelInferRequest r = BuildModelInferRequest("simple", "", payload);
  EXPECT_EQ(r.raw_input_contents_size(), 0);
  const auto& in = r.inputs(0).parameters();
  EXPECT_EQ(in.at("shared_memory_region").string_param(), "in0");
  EXPECT_EQ(in.at("shared_memory_byte_size").int64_param(), 8);
  EXPECT_EQ(in.count("shared_memory_offset"), 0u);  // offset 0 is left out
  ASSERT_EQ(r.outputs_size(), 1);
  EXPECT_EQ(r.outputs(0).name(), "OUTPUT0");
  EXPECT_EQ(r.outputs(0).parameters().at("shared_memory_offset").int64_param(), 64);
}

TEST(GrpcMessagesTest, DecodesOutputsFromRawContents) {
  inference::ModelInferResponse response;
  auto* out = response.add_outputs();
  out->set_name("OUTPUT0");
  out->set_datatype("INT32");
  out->add_shape(1);
  out->add_shape(2);
  const int32_t values[] = {7, -8};
  response.add_raw_output_contents(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  auto outputs = DecodeModelInferOutputs(response);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ((*outputs)[0].name, "OUTPUT0");
  EXPECT_EQ((*outputs)[0].dtype, DataType::kInt32);
  EXPECT_EQ((*outputs)[0].shape, (Shape{1, 2}));
  EXPECT_EQ((*outputs)[0].data.AsStringView(), std::string_view(reinterpret_cast<const char*>(values), 8));
}

TEST(GrpcMessagesTest, HostileResponsesAreErrors) {
  inference::ModelInferResponse missing;
  missing.add_outputs()->set_name("OUTPUT0");  // no raw contents
  auto a = DecodeModelInferOutputs(missing);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("raw_output_contents"));

  inference::ModelInferResponse unknown;
  auto* out = unknown.add_outputs();
  out->set_name("OUTPUT0");
  out->set_datatype("INT33");
  unknown.add_raw_output_contents("abcd");
  auto b = DecodeModelInferOutputs(unknown);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("OUTPUT0: unknown datatype"));
}

TEST(GrpcMessagesTest, CodeNames) {
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::UNAVAILABLE), "UNAVAILABLE");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::UNAUTHENTICATED), "UNAUTHENTICATED");
  EXPECT_EQ(GrpcCodeName(static_cast<grpc::StatusCode>(42)), "code 42");
  EXPECT_EQ(GrpcCodeName(static_cast<grpc::StatusCode>(-1)), "code -1");
}

}  // namespace
}  // namespace infera::bench
