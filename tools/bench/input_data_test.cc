#include "tools/bench/input_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

std::vector<int32_t> Ints(const Tensor& t) {
  std::vector<int32_t> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

const std::vector<TensorSpec> kSimpleInputs = {{"INPUT0", DataType::kInt32, {2, 4}},
                                               {"INPUT1", DataType::kInt32, {2, 4}}};
const std::vector<TensorSpec> kSimpleOutputs = {{"OUTPUT0", DataType::kInt32, {-1, 4}},
                                                {"OUTPUT1", DataType::kInt32, {-1, 4}}};

TEST(InputDataTest, RandomIsSeededAndInRange) {
  InputDataOptions options;
  options.num_random_payloads = 3;
  options.int_low = 10;
  options.int_high = 20;
  auto a = MakePayloadData(kSimpleInputs, kSimpleOutputs, true, 2, options);
  auto b = MakePayloadData(kSimpleInputs, kSimpleOutputs, true, 2, options);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    ASSERT_EQ((*a)[k].inputs.size(), 2u);
    EXPECT_EQ((*a)[k].inputs[0].shape, (Shape{2, 4}));
    EXPECT_EQ(Ints((*a)[k].inputs[0]), Ints((*b)[k].inputs[0]));
    for (int32_t v : Ints((*a)[k].inputs[1])) {
      EXPECT_GE(v, 10);
      EXPECT_LT(v, 20);
    }
  }
  EXPECT_NE(Ints((*a)[0].inputs[0]), Ints((*a)[1].inputs[0]));
}

TEST(InputDataTest, EveryDatatypeHasValidData) {
  for (DataType t : {DataType::kBool, DataType::kUint8, DataType::kUint64, DataType::kInt8, DataType::kInt64,
                     DataType::kFp16, DataType::kBf16, DataType::kFp32, DataType::kFp64, DataType::kBytes}) {
    for (InputDataMode mode : {InputDataMode::kRandom, InputDataMode::kZero}) {
      InputDataOptions options;
      options.mode = mode;
      auto p = MakePayloadData({{"x", t, {3, 5}}}, {}, true, 3, options);
      ASSERT_TRUE(p.ok());
      EXPECT_TRUE(ValidateTensorData((*p)[0].inputs[0]).ok()) << DataTypeName(t);
    }
  }
}

TEST(InputDataTest, ZeroIsOnePayloadOfZeros) {
  InputDataOptions options;
  options.mode = InputDataMode::kZero;
  auto p = MakePayloadData(kSimpleInputs, kSimpleOutputs, true, 2, options);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 1u);
  for (int32_t v : Ints((*p)[0].inputs[0])) EXPECT_EQ(v, 0);
}

constexpr char kFile[] = R"({
  "data": [
    {"INPUT0": [1, 2, 3, 4], "INPUT1": {"content": [[1, 1], [1, 1]], "shape": [4]}},
    {"INPUT0": [5, 6, 7, 8], "INPUT1": [2, 2, 2, 2]}
  ],
  "validation_data": [
    {"OUTPUT0": [2, 3, 4, 5]},
    {"OUTPUT0": [7, 8, 9, 10]}
  ]})";

TEST(InputDataTest, FileRowsAreBatched) {
  const std::vector<TensorSpec> inputs = {{"INPUT0", DataType::kInt32, {2, 4}},
                                          {"INPUT1", DataType::kInt32, {2, 4}}};
  auto p = ParseInputDataJson(kFile, inputs, kSimpleOutputs, true, 2);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->size(), 1u);  // 2 rows / batch 2
  EXPECT_EQ((*p)[0].inputs[0].shape, (Shape{2, 4}));
  EXPECT_THAT(Ints((*p)[0].inputs[0]), ::testing::ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_THAT(Ints((*p)[0].inputs[1]), ::testing::ElementsAre(1, 1, 1, 1, 2, 2, 2, 2));
  ASSERT_EQ((*p)[0].expected_outputs.size(), 1u);  // only OUTPUT0 is given
  EXPECT_EQ((*p)[0].expected_outputs[0].shape, (Shape{2, 4}));
  EXPECT_THAT(Ints((*p)[0].expected_outputs[0]), ::testing::ElementsAre(2, 3, 4, 5, 7, 8, 9, 10));
}

TEST(InputDataTest, FileRowsOnePerPayloadAtBatchOne) {
  const std::vector<TensorSpec> inputs = {{"INPUT0", DataType::kInt32, {1, 4}},
                                          {"INPUT1", DataType::kInt32, {1, 4}}};
  auto p = ParseInputDataJson(kFile, inputs, kSimpleOutputs, true, 1);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_THAT(Ints((*p)[1].inputs[0]), ::testing::ElementsAre(5, 6, 7, 8));
  EXPECT_EQ((*p)[1].expected_outputs[0].shape, (Shape{1, 4}));
}

TEST(InputDataTest, VariableDimensionInferredFromData) {
  auto p = ParseInputDataJson(R"({"data":[{"x":[1.5, 2.5, 3.5]}]})", {{"x", DataType::kFp32, {-1}}}, {}, false, 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)[0].inputs[0].shape, (Shape{3}));
}

TEST(InputDataTest, Base64IsOneBytesElementOrRawElements) {
  // "\xff\xd8\xff\x00jpeg" (binary, not UTF-8) and two little-endian INT32 1, 2.
  auto p = ParseInputDataJson(R"({"data":[{"IMAGE":{"b64":"/9j/AGpwZWc="},"N":{"b64":"AQAAAAIAAAA="}}]})",
                              {{"IMAGE", DataType::kBytes, {1, 1}}, {"N", DataType::kInt32, {1, 2}}}, {}, true, 1);
  ASSERT_TRUE(p.ok()) << p.status();
  const Tensor& image = (*p)[0].inputs[0];
  EXPECT_EQ(image.shape, (Shape{1, 1}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(image.data.data()), image.data.size()), std::string("\x08\0\0\0\xff\xd8\xff\0jpeg", 12));
  EXPECT_EQ(Ints((*p)[0].inputs[1]), (std::vector<int32_t>{1, 2}));
  const std::vector<TensorSpec> ints = {{"N", DataType::kInt32, {1, 2}}};
  EXPECT_THAT(std::string(ParseInputDataJson(R"({"data":[{"N":{"b64":"AQAA"}}]})", ints, {}, true, 1).status().message()),
              HasSubstr("not a whole number of INT32"));
  EXPECT_THAT(std::string(ParseInputDataJson(R"({"data":[{"N":{"b64":"@@@"}}]})", ints, {}, true, 1).status().message()),
              HasSubstr("not valid base64"));
  EXPECT_THAT(std::string(ParseInputDataJson(R"({"data":[{"N":{"b64":7}}]})", ints, {}, true, 1).status().message()),
              HasSubstr("must be a string"));
}

TEST(InputDataTest, FileErrorsNameTheProblem) {
  const std::vector<TensorSpec> inputs = {{"INPUT0", DataType::kInt32, {1, 4}}};
  EXPECT_THAT(std::string(ParseInputDataJson("{}", inputs, {}, true, 1).status().message()), HasSubstr("\"data\""));
  EXPECT_THAT(std::string(ParseInputDataJson(R"({"data":[{"X":[1]}]})", inputs, {}, true, 1).status().message()),
              HasSubstr("no tensor 'INPUT0'"));
  EXPECT_THAT(std::string(ParseInputDataJson(R"({"data":[{"INPUT0":[1,2,3]}]})", inputs, {}, true, 1).status().message()),
              HasSubstr("has 3 elements"));
  EXPECT_THAT(std::string(ParseInputDataJson(R"({"data":[{"INPUT0":[1,2,3,"a"]}]})", inputs, {}, true, 1).status().message()),
              HasSubstr("element 3"));
  EXPECT_THAT(std::string(ParseInputDataJson(R"({"data":[{"INPUT0":[1,2,3,4]}],"validation_data":[]})", inputs, {},
                                             true, 1).status().message()),
              HasSubstr("as long as"));
  InputDataOptions options;
  options.mode = InputDataMode::kFile;
  options.file = "/nonexistent/input.json";
  EXPECT_EQ(MakePayloadData(inputs, {}, true, 1, options).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace infera::bench

namespace infera::bench {
namespace {

std::vector<std::string> Elements(const Tensor& t) {
  auto views = SplitBytesElements(std::string_view(reinterpret_cast<const char*>(t.data.data()), t.data.size()));
  EXPECT_TRUE(views.ok());
  return views.ok() ? std::vector<std::string>(views->begin(), views->end()) : std::vector<std::string>{};
}

TEST(InputDataTest, ImageInputsCycleThroughTheImagesOtherBytesInputsTakeStringData) {
  InputDataOptions options;
  options.num_random_payloads = 3;
  options.image_inputs = {"IMAGE"};
  options.images = {"jpeg-a", "jpeg-b"};
  options.string_data = "The quick brown fox.";
  auto p = MakePayloadData({{"IMAGE", DataType::kBytes, {2, 1}}, {"TEXT", DataType::kBytes, {2, 1}}}, {}, true, 2,
                           options);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ(Elements((*p)[0].inputs[0]), (std::vector<std::string>{"jpeg-a", "jpeg-b"}));
  EXPECT_EQ(Elements((*p)[1].inputs[0]), (std::vector<std::string>{"jpeg-a", "jpeg-b"}));
  EXPECT_EQ(Elements((*p)[0].inputs[1]), (std::vector<std::string>{"The quick brown fox.", "The quick brown fox."}));
  options.images = {"a", "b", "c"};  // odd count: payloads start at different images
  p = MakePayloadData({{"IMAGE", DataType::kBytes, {2, 1}}}, {}, true, 2, options);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Elements((*p)[1].inputs[0]), (std::vector<std::string>{"c", "a"}));
}

}  // namespace
}  // namespace infera::bench
