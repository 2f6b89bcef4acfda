// Triton's generate extension codec: the request body → InferRequest mapping
// (generate_request.h) and the JSON / SSE answers (generate_response.h), hostile bodies
// included.
#include <cstring>
#include <string>

#include "codec/generate_request.h"
#include "codec/generate_response.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

// Inputs of every kind the mapping handles: a batching [-1, 16] INT32 (Triton's simple),
// a BYTES prompt, a BOOL flag, fixed and variable small tensors.
constexpr char kConfig[] = R"pb(
  name: "m" backend: "identity" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
          { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },
          { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] },
          { name: "small" data_type: TYPE_INT8 dims: [ -1 ] },
          { name: "half" data_type: TYPE_FP16 dims: [ 2 ] },
          { name: "wide" data_type: TYPE_UINT64 dims: [ 1 ] },
          { name: "f" data_type: TYPE_FP32 dims: [ 2, -1 ] } ]
)pb";

inference::ModelConfig Config(const char* text = kConfig) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

absl::StatusOr<InferRequest> Map(std::string_view body, size_t max_elements = 1 << 20) {
  auto parsed = GenerateRequestBody::Parse(body);
  if (!parsed.ok()) return parsed.status();
  return parsed->ToInferRequest(Config(), max_elements);
}

const Tensor* Input(const InferRequest& request, std::string_view name) {
  for (const Tensor& t : request.inputs) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string Error(std::string_view body, size_t max_elements = 1 << 20) {
  auto mapped = Map(body, max_elements);
  EXPECT_FALSE(mapped.ok()) << body;
  EXPECT_EQ(mapped.status().code(), absl::StatusCode::kInvalidArgument) << body;
  return std::string(mapped.status().message());
}

TEST(GenerateRequestTest, KeysNamingInputsBecomeTensorsTheRestParameters) {
  auto request = Map(R"({"id": "7", "text_input": "hello", "parameters": {"stream": true, "temperature": 0.5,
                         "max_tokens": 16, "name": "x", "flag": false}, "INPUT0": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]})");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->id, "7");
  ASSERT_EQ(request->inputs.size(), 3u);
  const Tensor* text = Input(*request, "text_input");
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->dtype, DataType::kBytes);
  EXPECT_EQ(text->shape, (Shape{1, 1}));
  EXPECT_EQ(text->data.AsStringView(), std::string("\x05\0\0\0hello", 9));
  const Tensor* stream = Input(*request, "stream");
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->data.AsStringView(), std::string("\x01", 1));
  const Tensor* input0 = Input(*request, "INPUT0");
  ASSERT_NE(input0, nullptr);
  EXPECT_EQ(input0->shape, (Shape{1, 16}));  // the batch dimension takes what is left
  int32_t last = 0;
  std::memcpy(&last, input0->data.data() + 15 * 4, 4);
  EXPECT_EQ(last, 15);
  EXPECT_EQ(std::get<double>(request->parameters.at("temperature")), 0.5);
  EXPECT_EQ(std::get<int64_t>(request->parameters.at("max_tokens")), 16);
  EXPECT_EQ(std::get<std::string>(request->parameters.at("name")), "x");
  EXPECT_EQ(std::get<bool>(request->parameters.at("flag")), false);
  EXPECT_EQ(request->parameters.count("stream"), 0u);
}

TEST(GenerateRequestTest, ShapesFollowTritonsFilling) {
  auto two_rows = Map(R"({"INPUT0": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]})");
  ASSERT_TRUE(two_rows.ok());
  EXPECT_EQ(two_rows->inputs[0].shape, (Shape{2, 16}));
  auto variable = Map(R"({"small": [1, -2, 3]})");
  ASSERT_TRUE(variable.ok());
  EXPECT_EQ(variable->inputs[0].shape, (Shape{1, 3}));
  auto inner = Map(R"({"f": [1, 2, 3, 4, 5, 6]})");  // [-1, 2, -1]: the innermost takes 3
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ(inner->inputs[0].shape, (Shape{1, 2, 3}));
  auto empty = Map(R"({"small": []})");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->inputs[0].shape, (Shape{1, 0}));
  EXPECT_THAT(Error(R"({"INPUT0": [1, 2, 3]})"), HasSubstr("has 3 elements; the model's shape [-1,16] cannot take them"));
  EXPECT_THAT(Error(R"({"f": [1, 2, 3]})"), HasSubstr("cannot take them"));
  // No elements for a shape without a variable dimension (found by fuzz_generate_request:
  // it passed as [4] with no data).
  auto parsed = GenerateRequestBody::Parse(R"({"four": []})");
  ASSERT_TRUE(parsed.ok());
  auto fixed = parsed->ToInferRequest(Config(R"pb(name: "n" input [ { name: "four" data_type: TYPE_INT32 dims: [4] } ])pb"), 16);
  EXPECT_THAT(fixed.status().message(), HasSubstr("input 'four' has 0 elements; the model's shape [4] cannot take them"));
}

TEST(GenerateRequestTest, ElementsAreCheckedAgainstTheDatatype) {
  EXPECT_THAT(Error(R"({"small": [1, 300]})"), HasSubstr("input 'small' (INT8) element 1: 300 is out of range"));
  EXPECT_THAT(Error(R"({"small": [1.5]})"), HasSubstr("expected an integer, got a number"));
  EXPECT_THAT(Error(R"({"small": ["1"]})"), HasSubstr("expected an integer, got a string"));
  EXPECT_THAT(Error(R"({"stream": 1})"), HasSubstr("input 'stream' (BOOL): expected true or false, got an integer"));
  EXPECT_THAT(Error(R"({"text_input": 5})"), HasSubstr("expected a string, got an integer"));
  EXPECT_THAT(Error(R"({"half": [1, 70000]})"), HasSubstr("70000 is out of range"));
  EXPECT_THAT(Error(R"({"f": [1e39, 1]})"), HasSubstr("out of range"));
  EXPECT_THAT(Error(R"({"wide": -1})"), HasSubstr("-1 is out of range"));
  auto wide = Map(R"({"wide": 18446744073709551615})");
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->inputs[0].data.size(), 8u);
}

TEST(GenerateRequestTest, HostileBodiesAreRefusedNamingTheProblem) {
  EXPECT_THAT(Error("{\"text_input\": "), HasSubstr("generate request body"));
  EXPECT_THAT(Error("[1, 2]"), HasSubstr("must be a JSON object, got an array"));
  EXPECT_THAT(Error("\"text\""), HasSubstr("must be a JSON object, got a string"));
  EXPECT_THAT(Error(R"({"id": 5})"), HasSubstr("'id' must be a string"));
  EXPECT_THAT(Error(R"({"parameters": [1]})"), HasSubstr("'parameters' must be a JSON object"));
  EXPECT_THAT(Error(R"({"max_tokens": 1, "parameters": {"max_tokens": 2}})"), HasSubstr("'max_tokens' is given more than once"));
  EXPECT_THAT(Error(R"({"text_input": "a", "text_input": "b"})"), HasSubstr("'text_input' is given more than once"));
  EXPECT_THAT(Error(R"({"text_input": {"a": 1}})"), HasSubstr("input 'text_input' must be a JSON scalar or a flat array"));
  EXPECT_THAT(Error(R"({"text_input": null})"), HasSubstr("got null"));
  EXPECT_THAT(Error(R"({"small": [[1], [2]]})"), HasSubstr("must be a flat array; element 0 is an array"));
  EXPECT_THAT(Error(R"({"unknown": [1, 2]})"),
              HasSubstr("'unknown' is not an input of model 'm', so it is a parameter, whose value must be"));
  EXPECT_THAT(Error(R"({"parameters": {"nested": {"a": 1}}})"), HasSubstr("'nested' is not an input"));
  EXPECT_THAT(Error(R"({"big": 18446744073709551615})"), HasSubstr("parameter 'big' is out of range"));
  EXPECT_THAT(Error(R"({"small": [1, 2, 3, 4, 5]})", 4), HasSubstr("has 5 elements, over the limit of 4"));
  EXPECT_THAT(Error(std::string(200, '[') + std::string(200, ']')), HasSubstr("nests deeper"));
  EXPECT_THAT(Error(std::string(kMaxGenerateBodyBytes + 1, ' ')), HasSubstr("generate request body"));
  EXPECT_THAT(Error("{\"text_input\": \"\xff\"}"), HasSubstr("Invalid encoding"));
}

TEST(GenerateRequestTest, AnEmptyBodyIsAnEmptyRequest) {
  auto request = Map("");
  ASSERT_TRUE(request.ok());
  EXPECT_TRUE(request->inputs.empty());
  EXPECT_TRUE(request->parameters.empty());
}

TEST(GenerateRequestTest, AnInputNamedParametersIsRefused) {
  auto parsed = GenerateRequestBody::Parse(R"({"parameters": {"a": 1}})");
  ASSERT_TRUE(parsed.ok());
  auto mapped = parsed->ToInferRequest(Config(R"pb(name: "p" input [ { name: "parameters" data_type: TYPE_INT32 dims: [1] } ])pb"), 16);
  EXPECT_THAT(mapped.status().message(), HasSubstr("generate reserves"));
}

TEST(GenerateRequestTest, RoutingKeyIsFoundBeforeTheModelIsKnown) {
  auto top = GenerateRequestBody::Parse(R"({"routing_key": "user-7", "text_input": "x"})");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(std::get<std::string>(top->routing_parameters().at("routing_key")), "user-7");
  auto nested = GenerateRequestBody::Parse(R"({"parameters": {"routing_key": 42}})");
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(std::get<int64_t>(nested->routing_parameters().at("routing_key")), 42);
  auto none = GenerateRequestBody::Parse(R"({"text_input": "x"})");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->routing_parameters().empty());
}

template <typename T>
Tensor Make(std::string name, DataType dtype, Shape shape, std::vector<T> values) {
  return Tensor{std::move(name), dtype, std::move(shape), Buffer::Copy(values.data(), values.size() * sizeof(T))};
}

Tensor Text(std::string name, std::vector<std::string> elements) {
  std::string data;
  for (const std::string& e : elements) AppendBytesElement(data, e);
  const int64_t n = static_cast<int64_t>(elements.size());
  return Tensor{std::move(name), DataType::kBytes, {n}, Buffer::FromString(std::move(data))};
}

InferResponse Response() {
  InferResponse response;
  response.model_name = "m";
  response.model_version = 3;
  return response;
}

TEST(GenerateResponseTest, OutputsByNameScalarWhenTheyHaveOneElement) {
  InferResponse response = Response();
  response.id = "r1";
  response.parameters["finish_reason"] = std::string("stop");
  response.parameters["model_name"] = std::string("shadowed");
  response.parameters["count"] = int64_t{2};
  response.outputs.push_back(Make<int32_t>("OUT", DataType::kInt32, {1}, {7}));
  response.outputs.push_back(Make<float>("LOGITS", DataType::kFp32, {1, 2}, {0.5f, 0.25f}));
  response.outputs.push_back(Text("text_output", {"caf\xc3\xa9 \"quoted\""}));
  std::string body;
  ASSERT_TRUE(EncodeGenerateResponse(response, &body).ok());
  EXPECT_EQ(body, "{\"id\":\"r1\",\"model_name\":\"m\",\"model_version\":\"3\",\"count\":2,\"finish_reason\":\"stop\","
                  "\"OUT\":7,\"LOGITS\":[0.5,0.25],\"text_output\":\"caf\xc3\xa9 \\\"quoted\\\"\"}");
}

TEST(GenerateResponseTest, AnswersTheModelCannotHaveAreInternalErrors) {
  InferResponse reserved = Response();
  reserved.outputs.push_back(Make<int32_t>("model_name", DataType::kInt32, {1}, {1}));
  std::string body;
  EXPECT_EQ(EncodeGenerateResponse(reserved, &body).code(), absl::StatusCode::kInternal);
  InferResponse binary = Response();
  binary.outputs.push_back(Text("text_output", {"\xff\xfe"}));
  const absl::Status status = EncodeGenerateResponse(binary, &body);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("not valid UTF-8"));
  InferResponse short_data = Response();
  short_data.outputs.push_back(Make<int32_t>("OUT", DataType::kInt32, {3}, {1}));
  EXPECT_EQ(EncodeGenerateResponse(short_data, &body).code(), absl::StatusCode::kInternal);
}

TEST(GenerateResponseTest, ServerSentEvents) {
  InferResponse response = Response();
  response.outputs.push_back(Make<uint32_t>("IDX", DataType::kUint32, {1}, {4}));
  std::string events = "data: {}\n\n";
  ASSERT_TRUE(AppendGenerateEvent(response, &events).ok());
  EXPECT_EQ(events, "data: {}\n\ndata: {\"model_name\":\"m\",\"model_version\":\"3\",\"IDX\":4}\n\n");
  InferResponse bad = Response();
  bad.outputs.push_back(Text("text_output", {"\xff"}));
  EXPECT_FALSE(AppendGenerateEvent(bad, &events).ok());
  EXPECT_EQ(events, "data: {}\n\ndata: {\"model_name\":\"m\",\"model_version\":\"3\",\"IDX\":4}\n\n");  // unchanged
  EXPECT_EQ(GenerateErrorEvent("bad \"x\"\n"), "data: {\"error\":\"bad \\\"x\\\"\\n\"}\n\n");
}

}  // namespace
}  // namespace infera
