#include "codec/request_decoder.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "codec/codec_test_util.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::Bytes;
using testing_util::BytesValues;
using testing_util::SerializeBytes;
using testing_util::Values;

constexpr size_t kMaxElements = 1 << 20;

absl::StatusOr<InferRequest> Decode(std::string body,
                                    std::optional<size_t> header_length = std::nullopt,
                                    size_t max_elements = kMaxElements) {
  return DecodeInferRequest(std::move(body), header_length, max_elements);
}

// The error message of a request that must be rejected as InvalidArgument.
std::string ErrorOf(std::string body, std::optional<size_t> header_length = std::nullopt,
                    size_t max_elements = kMaxElements) {
  absl::StatusOr<InferRequest> r = Decode(std::move(body), header_length, max_elements);
  if (r.ok()) return "<decoded without error>";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

// {"inputs":[<input>]} with one input.
std::string OneInput(std::string_view fields) { return StrCat(R"({"inputs":[{)", fields, "}]}"); }

TEST(DecodeJsonTest, SimpleInt32Request) {
  std::string body = R"({"id":"req-1","inputs":[
      {"name":"INPUT0","shape":[1,16],"datatype":"INT32",
       "data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,-16]},
      {"name":"INPUT1","shape":[1,16],"datatype":"INT32",
       "data":[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]]}],
    "outputs":[{"name":"OUTPUT0"},{"name":"OUTPUT1","parameters":{"binary_data":true}}]})";
  absl::StatusOr<InferRequest> r = Decode(body);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->id, "req-1");
  EXPECT_TRUE(r->model_name.empty());
  EXPECT_FALSE(r->model_version.has_value());
  ASSERT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(r->inputs[0].name, "INPUT0");
  EXPECT_EQ(r->inputs[0].dtype, DataType::kInt32);
  EXPECT_THAT(r->inputs[0].shape, ElementsAre(1, 16));
  EXPECT_THAT(Values<int32_t>(r->inputs[0]),
              ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, -16));
  EXPECT_EQ(Values<int32_t>(r->inputs[1]), std::vector<int32_t>(16, 1));
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(r->outputs[0].name, "OUTPUT0");
  EXPECT_TRUE(r->outputs[0].parameters.empty());
  EXPECT_EQ(GetBoolParameter(r->outputs[1].parameters, "binary_data"), true);
}

TEST(DecodeJsonTest, NestedAndFlatDataAreTheSame) {
  absl::StatusOr<InferRequest> flat =
      Decode(OneInput(R"("name":"x","shape":[2,3],"datatype":"FP32","data":[1,2,3,4,5,6])"));
  absl::StatusOr<InferRequest> nested =
      Decode(OneInput(R"("name":"x","shape":[2,3],"datatype":"FP32","data":[[1,2,3],[4,5,6]])"));
  absl::StatusOr<InferRequest> deep = Decode(OneInput(
      R"("name":"x","shape":[2,3],"datatype":"FP32","data":[[[1],[2],[3]],[[4],[5],[6]]])"));
  ASSERT_TRUE(flat.ok() && nested.ok() && deep.ok());
  EXPECT_THAT(Values<float>(flat->inputs[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(Values<float>(nested->inputs[0]), Values<float>(flat->inputs[0]));
  EXPECT_EQ(Values<float>(deep->inputs[0]), Values<float>(flat->inputs[0]));
}

TEST(DecodeJsonTest, KeysInAnyOrder) {
  // "data" before "datatype" (elements converted at the end) and before "shape".
  absl::StatusOr<InferRequest> r = Decode(R"({"outputs":[{"name":"y"}],"inputs":[
      {"data":[1,-2,3],"shape":[3],"datatype":"INT8","name":"a"},
      {"datatype":"UINT16","data":[7,8],"name":"b","shape":[2]},
      {"shape":[2],"data":[true,false],"name":"c","datatype":"BOOL"}],"id":"z"})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->id, "z");
  EXPECT_THAT(Values<int8_t>(r->inputs[0]), ElementsAre(1, -2, 3));
  EXPECT_THAT(Values<uint16_t>(r->inputs[1]), ElementsAre(7, 8));
  EXPECT_THAT(Values<uint8_t>(r->inputs[2]), ElementsAre(1, 0));
}

TEST(DecodeJsonTest, ScalarAndEmptyTensors) {
  absl::StatusOr<InferRequest> r = Decode(R"({"inputs":[
      {"name":"s","shape":[],"datatype":"INT64","data":[-9223372036854775808]},
      {"name":"e","shape":[0,3],"datatype":"FP32","data":[]},
      {"name":"n","shape":[2,0],"datatype":"BYTES","data":[[],[]]}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values<int64_t>(r->inputs[0]), ElementsAre(INT64_MIN));
  EXPECT_EQ(r->inputs[1].data.size(), 0u);
  EXPECT_EQ(r->inputs[2].data.size(), 0u);
}

TEST(DecodeJsonTest, BytesStrings) {
  absl::StatusOr<InferRequest> r = Decode(OneInput(
      R"("name":"text","shape":[4],"datatype":"BYTES","data":["hello","","a\u0000b","caf\u00e9 \"q\""])"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(BytesValues(r->inputs[0]),
              ElementsAre("hello", "", std::string("a\0b", 3), "caf\xc3\xa9 \"q\""));
  EXPECT_TRUE(ValidateTensorData(r->inputs[0]).ok());
}

TEST(DecodeJsonTest, FloatsAreExactAndAcceptNanAndInfinity) {
  absl::StatusOr<InferRequest> r = Decode(R"({"inputs":[
      {"name":"f","shape":[5],"datatype":"FP32","data":[0.1,NaN,Infinity,-Infinity,-0.0]},
      {"name":"d","shape":[3],"datatype":"FP64","data":[0.1,1.7976931348623157e308,5e-324]},
      {"name":"h","shape":[2],"datatype":"FP16","data":[0.333251953125,-Infinity]},
      {"name":"b","shape":[2],"datatype":"BF16","data":[3.140625,NaN]}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<float> f = Values<float>(r->inputs[0]);
  EXPECT_EQ(f[0], 0.1f);
  EXPECT_TRUE(std::isnan(f[1]));
  EXPECT_EQ(f[2], INFINITY);
  EXPECT_EQ(f[3], -INFINITY);
  EXPECT_TRUE(std::signbit(f[4]));
  EXPECT_THAT(Values<double>(r->inputs[1]), ElementsAre(0.1, 1.7976931348623157e308, 5e-324));
  EXPECT_THAT(Values<uint16_t>(r->inputs[2]), ElementsAre(0x3555, 0xfc00));
  std::vector<uint16_t> b = Values<uint16_t>(r->inputs[3]);
  EXPECT_EQ(b[0], 0x4049);
  EXPECT_EQ(b[1] & 0x7f80, 0x7f80);
  EXPECT_NE(b[1] & 0x007f, 0);
}

TEST(DecodeJsonTest, RequestParametersAreKept) {
  absl::StatusOr<InferRequest> r = Decode(R"({"parameters":{"b":true,"i":-7,"d":0.5,"s":"x",
      "big":12345678901,"e":1e3,"binary_data_output":false},
      "inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1],
                 "parameters":{"note":"ignored"}}],
      "outputs":[{"name":"y","parameters":{"classification":3,"binary_data":false}}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(GetBoolParameter(r->parameters, "b"), true);
  EXPECT_EQ(GetIntParameter(r->parameters, "i"), -7);
  EXPECT_EQ(GetIntParameter(r->parameters, "big"), 12345678901);
  EXPECT_EQ(GetDoubleParameter(r->parameters, "d"), 0.5);
  EXPECT_EQ(GetDoubleParameter(r->parameters, "e"), 1000.0);
  EXPECT_FALSE(GetIntParameter(r->parameters, "e").has_value());  // 1e3 is a double
  EXPECT_EQ(GetStringParameter(r->parameters, "s"), "x");
  EXPECT_EQ(GetIntParameter(r->outputs[0].parameters, "classification"), 3);
  EXPECT_EQ(GetBoolParameter(r->outputs[0].parameters, "binary_data"), false);
}

TEST(DecodeJsonTest, UnknownKeysAreIgnoredAtEveryLevel) {
  absl::StatusOr<InferRequest> r = Decode(R"({"x-ext":{"a":[1,{"b":[]}],"c":null},"n":5,
      "inputs":[{"name":"x","extra":[[1],{"k":"v"}],"shape":[1],"datatype":"INT32",
                 "data":[4],"more":null}],
      "outputs":[{"name":"y","future":{"deep":[1,2]}}],"tail":"ok"})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values<int32_t>(r->inputs[0]), ElementsAre(4));
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].name, "y");
}

TEST(DecodeJsonTest, NoOutputsMeansAll) {
  absl::StatusOr<InferRequest> r =
      Decode(OneInput(R"("name":"x","shape":[1],"datatype":"INT32","data":[1])"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->outputs.empty());
  EXPECT_TRUE(r->id.empty());
  EXPECT_TRUE(r->parameters.empty());
}

// ---- malformed JSON and wrong structure -------------------------------------------------

TEST(DecodeErrorsTest, MalformedJsonReportsTheOffset) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("malformed JSON at byte offset 0"));
  EXPECT_THAT(ErrorOf("{"), HasSubstr("malformed JSON at byte offset 1"));
  EXPECT_THAT(ErrorOf(R"({"inputs": [})"), HasSubstr("malformed JSON at byte offset 12"));
  EXPECT_THAT(ErrorOf(R"({"inputs": [}])"), HasSubstr("offset"));
  const std::string valid = OneInput(R"("name":"x","shape":[1],"datatype":"INT32","data":[1])");
  EXPECT_THAT(ErrorOf(valid + " trailing"),
              HasSubstr(StrCat("malformed JSON at byte offset ", valid.size() + 1,
                               ": The document root must not be followed by other values")));
  EXPECT_THAT(ErrorOf(R"({"id":"x",})"), HasSubstr("malformed JSON"));
  EXPECT_THAT(ErrorOf(R"({'id':"x"})"), HasSubstr("malformed JSON"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[1],"datatype":"FP32","data":[nan])")),
              HasSubstr("malformed JSON"));
  EXPECT_THAT(ErrorOf(valid + '\0' + "junk"),
              HasSubstr(StrCat("malformed JSON at byte offset ", valid.size(), ": NUL byte")));
  EXPECT_THAT(ErrorOf(std::string(R"({"id":"a)") + '\0' + R"(b"})"), HasSubstr("malformed JSON"));
}

TEST(DecodeErrorsTest, RootMustBeAnObject) {
  EXPECT_THAT(ErrorOf("[]"), HasSubstr("request body must be a JSON object, got an array"));
  EXPECT_THAT(ErrorOf("5"), HasSubstr("request body must be a JSON object, got a number"));
  EXPECT_THAT(ErrorOf("\"s\""), HasSubstr("must be a JSON object"));
  EXPECT_THAT(ErrorOf("null"), HasSubstr("must be a JSON object"));
}

TEST(DecodeErrorsTest, TopLevelFields) {
  EXPECT_THAT(ErrorOf("{}"), HasSubstr("request is missing 'inputs'"));
  EXPECT_THAT(ErrorOf(R"({"inputs":{}})"), HasSubstr("'inputs' must be an array of objects"));
  EXPECT_THAT(ErrorOf(R"({"inputs":null})"), HasSubstr("'inputs' must be an array"));
  EXPECT_THAT(ErrorOf(R"({"inputs":[]})"), HasSubstr("'inputs' must be a non-empty array"));
  EXPECT_THAT(ErrorOf(R"({"inputs":[1]})"), HasSubstr("inputs[0] must be an object, got a number"));
  EXPECT_THAT(ErrorOf(R"({"inputs":[[]]})"), HasSubstr("inputs[0] must be an object"));
  EXPECT_THAT(ErrorOf(R"({"id":5,"inputs":[]})"), HasSubstr("'id' must be a string, got a number"));
  EXPECT_THAT(ErrorOf(R"({"id":{},"inputs":[]})"),
              HasSubstr("'id' must be a string, got an object"));
  EXPECT_THAT(ErrorOf(R"({"parameters":[],"inputs":[]})"),
              HasSubstr("'parameters' of the request must be an object"));
  EXPECT_THAT(ErrorOf(R"({"outputs":{},"inputs":[]})"), HasSubstr("'outputs' must be an array"));
  EXPECT_THAT(ErrorOf(R"({"outputs":["y"],"inputs":[]})"),
              HasSubstr("outputs[0] must be an object, got a string"));
  EXPECT_THAT(ErrorOf(R"({"inputs":[],"inputs":[]})"), HasSubstr("non-empty"));
}

TEST(DecodeErrorsTest, ParameterValuesMustBeScalars) {
  const std::string input = R"("inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1]}])";
  EXPECT_THAT(
      ErrorOf(StrCat(R"({"parameters":{"nested":{"a":1}},)", input, "}")),
      HasSubstr("request parameter 'nested' must be a bool, number or string, not an object"));
  EXPECT_THAT(ErrorOf(StrCat(R"({"parameters":{"list":[1]},)", input, "}")),
              HasSubstr("request parameter 'list' must be a bool, number or string, not an array"));
  EXPECT_THAT(ErrorOf(StrCat(R"({"parameters":{"nil":null},)", input, "}")),
              HasSubstr("request parameter 'nil' must be a bool, number or string, not null"));
  EXPECT_THAT(ErrorOf(StrCat(R"({"parameters":{"huge":18446744073709551615},)", input, "}")),
              HasSubstr("request parameter 'huge' is out of range"));
  EXPECT_THAT(ErrorOf(StrCat(R"({"parameters":{"k":1,"k":2},)", input, "}")),
              HasSubstr("duplicate request parameter 'k'"));
  EXPECT_THAT(ErrorOf(StrCat(R"({"parameters":{"binary_data_output":1},)", input, "}")),
              HasSubstr("'binary_data_output' must be a bool"));
  EXPECT_THAT(
      ErrorOf(OneInput(
          R"("name":"x","shape":[1],"datatype":"INT32","data":[1],"parameters":{"p":{}})")),
      HasSubstr("parameter 'p' of input 'x' must be a bool, number or string, not an object"));
  EXPECT_THAT(ErrorOf(StrCat(R"({"outputs":[{"name":"y","parameters":{"binary_data":"yes"}}],)",
                             input, "}")),
              HasSubstr("parameter 'binary_data' of output 'y' must be a bool"));
  EXPECT_THAT(ErrorOf(StrCat(R"({"outputs":[{"name":"y","parameters":{"q":[]}}],)", input, "}")),
              HasSubstr("parameter 'q' of output 'y'"));
}

TEST(DecodeErrorsTest, InputFields) {
  EXPECT_THAT(ErrorOf(OneInput(R"("shape":[1],"datatype":"INT32","data":[1])")),
              HasSubstr("inputs[0] is missing 'name'"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","datatype":"INT32","data":[1])")),
              HasSubstr("input 'x' is missing 'shape'"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[1],"data":[1])")),
              HasSubstr("input 'x' is missing 'datatype'"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[1],"datatype":"INT32")")),
              HasSubstr("input 'x' is missing 'data'"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":7,"shape":[1],"datatype":"INT32","data":[1])")),
              HasSubstr("'name' of inputs[0] must be a string, got a number"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"","shape":[1],"datatype":"INT32","data":[1])")),
              HasSubstr("inputs[0] has an empty name"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[1],"datatype":"FP8","data":[1])")),
              HasSubstr("input 'x' has unknown datatype 'FP8'"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[1],"datatype":["FP32"],"data":[1])")),
              HasSubstr("'datatype' of input 'x' must be a string, got an array"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[1],"datatype":"INT32","data":1)")),
              HasSubstr("'data' of input 'x' must be an array"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[1],"datatype":"INT32","data":{})")),
              HasSubstr("'data' of input 'x' must be an array"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[2],"datatype":"INT32","data":[1,{}])")),
              HasSubstr("'data' of input 'x' may hold only values and arrays; element 1"));
  EXPECT_THAT(
      ErrorOf(OneInput(R"("name":"x","name":"y","shape":[1],"datatype":"INT32","data":[1])")),
      HasSubstr("duplicate key 'name' in input 'x'"));
  EXPECT_THAT(
      ErrorOf(OneInput(R"("name":"x","shape":[1],"datatype":"INT32","data":[1],"data":[2])")),
      HasSubstr("duplicate key 'data' in input 'x'"));
  EXPECT_THAT(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1]},
                                   {"name":"x","shape":[1],"datatype":"INT32","data":[2]}]})"),
              HasSubstr("input 'x' already exists in request"));
  EXPECT_THAT(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1]}],
                        "outputs":[{"name":"y"},{"name":"y"}]})"),
              HasSubstr("output 'y' already exists in request"));
  EXPECT_THAT(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1]}],
                        "outputs":[{"parameters":{}}]})"),
              HasSubstr("outputs[0] is missing 'name'"));
  EXPECT_THAT(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1]}],
                        "outputs":[{"name":null}]})"),
              HasSubstr("'name' of outputs[0] must be a string, got null"));
}

TEST(DecodeErrorsTest, Shapes) {
  auto with_shape = [](std::string_view shape) {
    return OneInput(StrCat(R"("name":"x","datatype":"FP32","data":[],"shape":)", shape));
  };
  EXPECT_THAT(
      ErrorOf(with_shape("3")),
      HasSubstr("'shape' of input 'x' must be an array of non-negative integers, got a number"));
  EXPECT_THAT(ErrorOf(with_shape("[2,-1]")), HasSubstr("element 1 is -1"));
  EXPECT_THAT(ErrorOf(with_shape("[1.5]")), HasSubstr("element 0 is 1.5"));
  EXPECT_THAT(ErrorOf(with_shape("[1e2]")), HasSubstr("element 0 is 1e2"));
  EXPECT_THAT(ErrorOf(with_shape(R"(["2"])")), HasSubstr("element 0 is a string"));
  EXPECT_THAT(ErrorOf(with_shape("[[2]]")), HasSubstr("found a nested array"));
  EXPECT_THAT(ErrorOf(with_shape("[{}]")), HasSubstr("found an object"));
  EXPECT_THAT(ErrorOf(with_shape("[99999999999999999999]")),
              HasSubstr("element 0 is 99999999999999999999"));
  EXPECT_THAT(
      ErrorOf(with_shape("[9223372036854775807,2]")),
      HasSubstr(
          "invalid shape for input 'x': shape [9223372036854775807,2] causes total element count to exceed "
          "maximum size of 9223372036854775807"));
  EXPECT_THAT(ErrorOf(with_shape("[4294967296,4294967296]")),
              HasSubstr("more elements than int64"));
  EXPECT_THAT(ErrorOf(with_shape("[1048576,1048576]")),
              HasSubstr("shape [1048576,1048576] of input 'x' has 1099511627776 elements, more "
                        "than the limit of 1048576"));
  // A hostile rank does not make a hostile error message.
  std::string dims = "[2";
  for (int i = 1; i < 100000; ++i) dims += ",2";
  const std::string message = ErrorOf(with_shape(dims + "]"));
  EXPECT_THAT(message,
              HasSubstr("input 'x': shape [2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,...] (rank 100000) causes"));
  EXPECT_LT(message.size(), 200u);
}

TEST(DecodeErrorsTest, ElementCountMismatch) {
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[2,2],"datatype":"FP32","data":[1,2,3])")),
              HasSubstr("input 'x' has 3 data elements but shape [2,2] needs 4"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[2],"datatype":"FP32","data":[1,2,3])")),
              HasSubstr("input 'x' has more data elements than its shape [2] holds (2)"));
  // Data before the shape is counted against max_elements, then against the shape.
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","datatype":"FP32","data":[1,2,3],"shape":[2])")),
              HasSubstr("input 'x' has 3 data elements but shape [2] needs 2"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","data":[1,2,3,4,5],"datatype":"FP32","shape":[5])"),
                      std::nullopt, 4),
              HasSubstr("input 'x' has more than 4 data elements"));
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"x","shape":[5],"datatype":"FP32","data":[1,2,3,4,5])"),
                      std::nullopt, 4),
              HasSubstr("shape [5] of input 'x' has 5 elements, more than the limit of 4"));
}

TEST(DecodeErrorsTest, ElementTypeAndRange) {
  auto data = [](std::string_view dtype, std::string_view values) {
    return OneInput(
        StrCat(R"("name":"t","shape":[3],"datatype":")", dtype, R"(","data":)", values));
  };
  EXPECT_THAT(
      ErrorOf(data("INT8", "[1,2,300]")),
      HasSubstr("input 't' data element 2: number 300 is out of range for INT8 [-128, 127]"));
  EXPECT_THAT(ErrorOf(data("UINT8", "[1,-1,3]")),
              HasSubstr("input 't' data element 1: number -1 is out of range for UINT8 [0, 255]"));
  EXPECT_THAT(ErrorOf(data("UINT64", "[1,2,-1]")),
              HasSubstr("element 2: number -1 is out of range for UINT64"));
  for (const char* type :
       {"INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64"}) {
    EXPECT_THAT(ErrorOf(data(type, "[1.5,2,3]")),
                HasSubstr(StrCat("input 't' data element 0: expected an integer for ", type,
                                 ", got number 1.5")));
  }
  EXPECT_THAT(ErrorOf(data("INT32", R"([1,"2",3])")),
              HasSubstr("element 1: expected an integer for INT32, got string \"2\""));
  EXPECT_THAT(ErrorOf(data("BOOL", "[true,1,false]")),
              HasSubstr("element 1: expected true or false for BOOL, got number 1"));
  EXPECT_THAT(ErrorOf(data("FP32", R"([1,2,"3"])")),
              HasSubstr("element 2: expected a number for FP32, got string \"3\""));
  EXPECT_THAT(ErrorOf(data("FP32", "[1,null,3]")),
              HasSubstr("element 1: expected a number for FP32, got null"));
  EXPECT_THAT(ErrorOf(data("FP32", "[1,2,1e39]")),
              HasSubstr("element 2: number 1e39 is out of range for FP32"));
  EXPECT_THAT(ErrorOf(data("FP16", "[1,2,70000]")),
              HasSubstr("element 2: number 70000 is out of range for FP16"));
  EXPECT_THAT(ErrorOf(data("BYTES", R"(["a",5,"c"])")),
              HasSubstr("element 1: expected a string for BYTES, got number 5"));
  // Same errors when the data comes before the datatype (converted at the end).
  EXPECT_THAT(ErrorOf(OneInput(R"("name":"t","data":[0,1,256],"shape":[3],"datatype":"UINT8")")),
              HasSubstr("input 't' data element 2: number 256 is out of range for UINT8"));
}

TEST(DecodeErrorsTest, DeepNestingIsRejectedWithoutRecursingFurther) {
  const std::string deep_data =
      OneInput(StrCat(R"("name":"x","shape":[1],"datatype":"INT32","data":)", std::string(110, '['),
                      "1", std::string(110, ']')));
  EXPECT_THAT(ErrorOf(deep_data), HasSubstr("JSON nesting depth exceeds maximum allowed limit (100)"));
  EXPECT_THAT(ErrorOf(StrCat(R"({"ext":)", std::string(100000, '['), "}")),
              HasSubstr("JSON nesting depth exceeds maximum allowed limit (100)"));
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  EXPECT_THAT(ErrorOf(objects), HasSubstr("JSON nesting depth exceeds maximum allowed limit (100)"));
  // 97 levels of data nesting (plus root, inputs and the input object) are fine: Triton's
  // limit of 100 in all.
  const std::string ok = OneInput(StrCat(R"("name":"x","shape":[1],"datatype":"INT32","data":)",
                                         std::string(97, '['), "1", std::string(97, ']')));
  EXPECT_TRUE(Decode(ok).ok());
  const std::string one_more = OneInput(StrCat(R"("name":"x","shape":[1],"datatype":"INT32","data":)",
                                               std::string(98, '['), "1", std::string(98, ']')));
  EXPECT_THAT(ErrorOf(one_more), HasSubstr("JSON nesting depth exceeds maximum allowed limit (100)"));
}

// Every proper prefix of a valid request is rejected cleanly.
TEST(DecodeErrorsTest, EveryTruncationIsAnError) {
  const std::string body = R"({"id":"t","parameters":{"p":1.5},"inputs":[
      {"name":"x","shape":[2],"datatype":"BYTES","data":["a\"b","\u00e9"]},
      {"name":"y","shape":[2],"datatype":"FP32","data":[NaN,-Infinity]}],
      "outputs":[{"name":"z","parameters":{"binary_data":true}}]})";
  ASSERT_TRUE(Decode(body).ok());
  for (size_t n = 0; n < body.size(); ++n) {
    absl::StatusOr<InferRequest> r = Decode(body.substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << n;
  }
}

// Random byte mutations never crash and never yield anything but OK or InvalidArgument.
TEST(DecodeErrorsTest, RandomMutationsAreHandled) {
  const std::string body = R"({"id":"t","inputs":[
      {"name":"x","shape":[2,2],"datatype":"INT16","data":[[1,-2],[3,4]]},
      {"name":"s","shape":[1],"datatype":"BYTES","data":["abc"]},
      {"name":"b","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  const std::string binary = Bytes(std::vector<float>{1.5f, -2.0f});
  std::mt19937 rng(42);
  const char kAlphabet[] = "{}[]\",:0123456789-.eE ntfaNI\\u\x80\xff";
  int num_ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string mutated = body;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      mutated[rng() % mutated.size()] = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
    }
    absl::StatusOr<InferRequest> r = Decode(mutated + binary, mutated.size());
    if (r.ok()) {
      ++num_ok;
    } else {
      ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << mutated;
    }
  }
  EXPECT_GT(num_ok, 0);  // some edits are harmless (whitespace, digits)
}

}  // namespace
}  // namespace infera
