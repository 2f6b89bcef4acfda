#include "grpc/infer_message_codec.h"

#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using inference::ModelInferRequest;
using inference::ModelInferResponse;

ModelInferRequest::InferInputTensor* AddInput(ModelInferRequest& m, const std::string& name,
                                              const std::string& datatype,
                                              std::vector<int64_t> shape) {
  auto* input = m.add_inputs();
  input->set_name(name);
  input->set_datatype(datatype);
  for (int64_t d : shape) input->add_shape(d);
  return input;
}

std::string Int32Bytes(std::vector<int32_t> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4);
}

ModelInferRequest RawRequest() {
  ModelInferRequest m;
  m.set_model_name("simple");
  m.set_model_version("2");
  m.set_id("req-1");
  AddInput(m, "INPUT0", "INT32", {1, 2});
  AddInput(m, "INPUT1", "INT32", {1, 2});
  m.add_raw_input_contents(Int32Bytes({1, 2}));
  m.add_raw_input_contents(Int32Bytes({3, 4}));
  (*m.mutable_parameters())["priority"].set_int64_param(3);
  (*m.mutable_parameters())["flag"].set_bool_param(true);
  (*m.mutable_parameters())["ratio"].set_double_param(0.5);
  (*m.mutable_parameters())["tag"].set_string_param("x");
  (*m.mutable_parameters())["big"].set_uint64_param(7);
  m.add_outputs()->set_name("OUTPUT1");
  return m;
}

std::string Error(const absl::StatusOr<InferRequest>& r) {
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

TEST(InferMessageCodecTest, DecodesRawRequest) {
  const ModelInferRequest m = RawRequest();
  auto r = DecodeModelInferRequest(m, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model_name, "simple");
  EXPECT_EQ(r->model_version, 2);
  EXPECT_EQ(r->id, "req-1");
  ASSERT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(r->inputs[1].name, "INPUT1");
  EXPECT_EQ(r->inputs[1].dtype, DataType::kInt32);
  EXPECT_THAT(r->inputs[1].shape, ElementsAre(1, 2));
  EXPECT_EQ(r->inputs[1].data.AsStringView(), Int32Bytes({3, 4}));
  EXPECT_NE(r->inputs[1].data.data(),
            reinterpret_cast<const uint8_t*>(m.raw_input_contents(1).data()));  // copied
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].name, "OUTPUT1");
  EXPECT_EQ(GetIntParameter(r->parameters, "priority"), 3);
  EXPECT_EQ(GetIntParameter(r->parameters, "big"), 7);
  EXPECT_EQ(GetBoolParameter(r->parameters, "flag"), true);
  EXPECT_EQ(GetDoubleParameter(r->parameters, "ratio"), 0.5);
  EXPECT_EQ(GetStringParameter(r->parameters, "tag"), "x");
}

TEST(InferMessageCodecTest, RawInputsViewTheMessageWhenAnOwnerKeepsItAlive) {
  auto m = std::make_shared<ModelInferRequest>(RawRequest());
  auto r = DecodeModelInferRequest(*m, m);
  ASSERT_TRUE(r.ok()) << r.status();
  const auto* raw = reinterpret_cast<const uint8_t*>(m->raw_input_contents(0).data());
  EXPECT_EQ(r->inputs[0].data.data(), raw);
  std::weak_ptr<ModelInferRequest> weak = m;
  m.reset();
  EXPECT_FALSE(weak.expired());  // the tensors keep it
  r->inputs.clear();
  EXPECT_TRUE(weak.expired());
}

TEST(InferMessageCodecTest, DecodesTypedRequest) {
  ModelInferRequest m;
  m.set_model_name("m");
  auto* a = AddInput(m, "A", "FP32", {2});
  a->mutable_contents()->add_fp32_contents(0.5f);
  a->mutable_contents()->add_fp32_contents(-1.0f);
  auto* b = AddInput(m, "B", "BYTES", {1});
  b->mutable_contents()->add_bytes_contents("hi");
  auto r = DecodeModelInferRequest(m, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->model_version.has_value());
  float values[2];
  std::memcpy(values, r->inputs[0].data.data(), 8);
  EXPECT_EQ(values[0], 0.5f);
  EXPECT_EQ(values[1], -1.0f);
  EXPECT_EQ(r->inputs[1].data.AsStringView(), std::string("\x02\0\0\0hi", 6));
}

TEST(InferMessageCodecTest, RejectsMalformedRequestsNamingTheProblem) {
  ModelInferRequest m = RawRequest();
  m.clear_model_name();
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)), HasSubstr("model_name is empty"));

  m = RawRequest();
  m.set_model_version("two");
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)), HasSubstr("invalid model version 'two'"));

  m = RawRequest();
  m.mutable_raw_input_contents()->RemoveLast();
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)),
              HasSubstr("raw_input_contents has 1 entries for 2 inputs"));

  m = RawRequest();
  m.set_raw_input_contents(1, Int32Bytes({3}));
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)),
              HasSubstr("raw_input_contents[1] for input 'INPUT1'"));

  m = RawRequest();
  m.mutable_inputs(0)->mutable_contents()->add_int_contents(1);
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)),
              HasSubstr("input 'INPUT0' sets typed contents but the request uses raw_input_contents"));

  m = RawRequest();
  m.mutable_inputs(0)->set_datatype("FLOAT");
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)), HasSubstr("unknown datatype 'FLOAT'"));

  m = RawRequest();
  m.mutable_inputs(0)->set_shape(1, -2);
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)), HasSubstr("invalid shape [1,-2]"));

  m = RawRequest();
  m.mutable_inputs(1)->set_name("INPUT0");
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)), HasSubstr("input 'INPUT0' already exists in request"));

  m = RawRequest();
  m.add_outputs()->set_name("OUTPUT1");
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)), HasSubstr("output 'OUTPUT1' already exists in request"));

  m = RawRequest();
  (*m.mutable_parameters())["huge"].set_uint64_param(UINT64_MAX);
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)), HasSubstr("parameter 'huge'"));

  m = RawRequest();
  (*m.mutable_parameters())["empty"];
  EXPECT_THAT(Error(DecodeModelInferRequest(m, nullptr)), HasSubstr("'empty' has no value"));
}

TEST(InferMessageCodecTest, ParsesVersions) {
  EXPECT_EQ(ParseModelVersion("").value(), std::nullopt);
  EXPECT_EQ(ParseModelVersion("12").value(), 12);
  for (const char* bad : {"0", "-1", "1.0", " 1", "x"}) {
    EXPECT_FALSE(ParseModelVersion(bad).ok()) << bad;
  }
}

InferResponse SampleResponse() {
  InferResponse response;
  response.model_name = "simple";
  response.model_version = 2;
  response.id = "req-1";
  response.parameters["sequence_end"] = true;
  std::vector<int32_t> values = {5, -6};
  response.outputs.push_back(
      Tensor{"OUTPUT0", DataType::kInt32, {1, 2}, Buffer::Copy(values.data(), 8)});
  return response;
}

TEST(InferMessageCodecTest, EncodesEveryOutputAsRawContents) {
  ModelInferResponse raw;
  ASSERT_TRUE(EncodeModelInferResponse(SampleResponse(), &raw).ok());
  EXPECT_EQ(raw.model_name(), "simple");
  EXPECT_EQ(raw.model_version(), "2");
  EXPECT_EQ(raw.id(), "req-1");
  EXPECT_TRUE(raw.parameters().at("sequence_end").bool_param());
  ASSERT_EQ(raw.outputs_size(), 1);
  EXPECT_EQ(raw.outputs(0).datatype(), "INT32");
  EXPECT_THAT(raw.outputs(0).shape(), ElementsAre(1, 2));
  EXPECT_FALSE(raw.outputs(0).has_contents());
  ASSERT_EQ(raw.raw_output_contents_size(), 1);
  EXPECT_EQ(raw.raw_output_contents(0), Int32Bytes({5, -6}));
}

TEST(InferMessageCodecTest, BytesAndHalfOutputsKeepTheTensorLayout) {
  InferResponse response = SampleResponse();
  uint16_t half = 0x3c00;
  response.outputs.push_back(Tensor{"H", DataType::kFp16, {1}, Buffer::Copy(&half, 2)});
  const std::string bytes("\x02\0\0\0hi\0\0\0\0", 10);
  response.outputs.push_back(Tensor{"S", DataType::kBytes, {2}, Buffer::Copy(bytes.data(), 10)});
  ModelInferResponse message;
  ASSERT_TRUE(EncodeModelInferResponse(response, &message).ok());
  ASSERT_EQ(message.raw_output_contents_size(), 3);
  EXPECT_EQ(message.raw_output_contents(1), std::string("\x00\x3c", 2));
  EXPECT_EQ(message.raw_output_contents(2), bytes);  // 4-byte length before each element
  EXPECT_EQ(message.outputs(2).datatype(), "BYTES");
}

TEST(InferMessageCodecTest, MalformedOutputIsInternal) {
  InferResponse response = SampleResponse();
  response.outputs[0].shape = {1, 3};  // 8 bytes for 3 INT32
  ModelInferResponse message;
  absl::Status status = EncodeModelInferResponse(response, &message);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()), HasSubstr("output 'OUTPUT0'"));
}

}  // namespace
}  // namespace infera
