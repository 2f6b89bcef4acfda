// ParseEmbeddingsRequest and EmbeddingDimension: the body and the model shape of
// POST /v1/embeddings.
#include "openai/embeddings_request.h"

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera::openai {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(std::string_view body) {
  auto r = ParseEmbeddingsRequest(body);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

TEST(ParseEmbeddingsRequestTest, StringOrListOfStrings) {
  auto r = ParseEmbeddingsRequest(R"({"model": "m", "input": "hello"})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model, "m");
  EXPECT_THAT(r->inputs, ElementsAre("hello"));
  EXPECT_FALSE(r->base64);
  EXPECT_FALSE(r->dimensions.has_value());
  r = ParseEmbeddingsRequest(
      R"({"model": "m", "input": ["a", "", "c"], "encoding_format": "base64", "dimensions": 8, "user": "u"})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->inputs, ElementsAre("a", "", "c"));
  EXPECT_TRUE(r->base64);
  EXPECT_EQ(r->dimensions, 8);
  r = ParseEmbeddingsRequest(R"({"model": "m", "input": "x", "encoding_format": "float", "dimensions": null})");
  ASSERT_TRUE(r.ok());
}

TEST(ParseEmbeddingsRequestTest, MalformedBodiesNameTheField) {
  EXPECT_THAT(ErrorOf("not json"), HasSubstr("request body"));
  EXPECT_THAT(ErrorOf("[1]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(ErrorOf(R"({"input": "x"})"), HasSubstr("'model' is required"));
  EXPECT_THAT(ErrorOf(R"({"model": 3, "input": "x"})"), HasSubstr("'model' is required"));
  EXPECT_THAT(ErrorOf(R"({"model": "m"})"), HasSubstr("'input' is required"));
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": []})"), HasSubstr("empty list"));
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": 5})"), HasSubstr("a string or a list of strings"));
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": ["a", {}]})"), HasSubstr("'input[1]' is not a string"));
  EXPECT_TRUE(ParseEmbeddingsRequest(R"({"model": "m", "input": [1, 2]})")->token_ids);
  EXPECT_TRUE(ParseEmbeddingsRequest(R"({"model": "m", "input": [[1, 2], [3]]})")->token_ids);
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": [[1, 2], "a"]})"), HasSubstr("mixes strings and token ids"));
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": [[]]})"), HasSubstr("'input[0]' is not a string"));
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": "x", "encoding_format": "int8"})"), HasSubstr("'encoding_format'"));
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": "x", "dimensions": 0})"), HasSubstr("'dimensions'"));
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": "x", "dimensions": 1.5})"), HasSubstr("'dimensions'"));
  std::string many = R"({"model": "m", "input": [)";
  for (int i = 0; i < 2049; ++i) many += i ? ",\"a\"" : "\"a\"";
  many += "]}";
  EXPECT_THAT(ErrorOf(many), HasSubstr("2049 items; the limit is 2048"));
  EXPECT_THAT(ErrorOf(R"({"model": "m", "input": )" + std::string(300, '[') + std::string(300, ']') + "}"),
              HasSubstr("request body"));
}

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

TEST(EmbeddingDimensionTest, OneTextInAndOneVectorOut) {
  auto d = EmbeddingDimension(Config(R"(name: "e" max_batch_size: 8
      input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
      output [ { name: "EMBEDDING" data_type: TYPE_FP32 dims: [ 128 ] } ])"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, 128);
  for (const char* bad : {
           R"(name: "e" input [ { name: "T" data_type: TYPE_FP32 dims: [ 1 ] } ]
              output [ { name: "E" data_type: TYPE_FP32 dims: [ 4 ] } ])",
           R"(name: "e" input [ { name: "T" data_type: TYPE_STRING dims: [ 2 ] } ]
              output [ { name: "E" data_type: TYPE_FP32 dims: [ 4 ] } ])",
           R"(name: "e" input [ { name: "T" data_type: TYPE_STRING dims: [ 1 ] } ]
              output [ { name: "E" data_type: TYPE_FP32 dims: [ 2, 4 ] } ])",
           R"(name: "e" input [ { name: "T" data_type: TYPE_STRING dims: [ 1 ] } ]
              output [ { name: "E" data_type: TYPE_FP32 dims: [ -1 ] } ])",
           R"(name: "e" input [ { name: "T" data_type: TYPE_STRING dims: [ 1 ] } ]
              output [ { name: "E" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "F" data_type: TYPE_FP32 dims: [ 4 ] } ])"}) {
    auto r = EmbeddingDimension(Config(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("is not an embedding model"));
  }
}

}  // namespace
}  // namespace infera::openai
