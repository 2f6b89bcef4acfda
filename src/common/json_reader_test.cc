#include "common/json_reader.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

std::string Nested(int depth, std::string_view inner = "true") {
  return std::string(depth, '[') + std::string(inner) + std::string(depth, ']');
}

TEST(JsonReaderTest, ParsesAnObject) {
  rapidjson::Document doc;
  ASSERT_TRUE(ReadJson(R"({"a": [1, 2.5, "x"], "b": {"c": null}})", "body", doc).ok());
  ASSERT_TRUE(doc.IsObject());
  EXPECT_EQ(doc["a"].Size(), 3u);
  EXPECT_EQ(doc["a"][1].GetDouble(), 2.5);
  EXPECT_STREQ(doc["a"][2].GetString(), "x");
  EXPECT_TRUE(doc["b"]["c"].IsNull());
}

TEST(JsonReaderTest, AcceptsExactlyTheDepthLimit) {
  rapidjson::Document doc;
  ASSERT_TRUE(ReadJson(Nested(kMaxJsonDepth), "body", doc).ok());
  const rapidjson::Value* v = &doc;
  for (int i = 0; i < kMaxJsonDepth; ++i) {
    ASSERT_TRUE(v->IsArray());
    v = &(*v)[0];
  }
  EXPECT_TRUE(v->IsTrue());
}

TEST(JsonReaderTest, RejectsOneLevelPastTheLimitNamingIt) {
  rapidjson::Document doc;
  absl::Status s = ReadJson(Nested(kMaxJsonDepth + 1), "request body", doc);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("request body"));
  EXPECT_THAT(s.message(), HasSubstr("deeper than the limit of 100 levels"));
}

TEST(JsonReaderTest, DepthCountsObjectsAndArraysTogether) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "{\"k\":[";
  text += "1";
  for (int i = 0; i < 60; ++i) text += "]}";
  rapidjson::Document doc;
  EXPECT_THAT(ReadJson(text, "x", doc).message(), HasSubstr("100 levels"));
  EXPECT_TRUE(ReadJson(text, "x", doc, {.max_bytes = kMaxJsonBytes, .max_depth = 120}).ok());
}

// The crash of issue 13 finding 1: 250,000 levels overflowed the recursive parser's stack.
TEST(JsonReaderTest, HugeNestingIsAnErrorNotACrash) {
  const std::string text = "{\"ready\":" + Nested(250000) + "}";
  rapidjson::Document doc;
  absl::Status s = ReadJson(text, "body", doc);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("100 levels"));
  // Unbalanced input too: the depth limit trips before the syntax error at the end.
  EXPECT_THAT(ReadJson(std::string(300000, '['), "body", doc).message(), HasSubstr("100 levels"));
  // The document is reusable after a failure.
  ASSERT_TRUE(ReadJson("[1]", "body", doc).ok());
  EXPECT_EQ(doc.Size(), 1u);
}

TEST(JsonReaderTest, RejectsTextOverTheSizeLimit) {
  rapidjson::Document doc;
  absl::Status s = ReadJson("[1, 2, 3]", "config.json", doc, {.max_bytes = 8});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("config.json"));
  EXPECT_THAT(s.message(), HasSubstr("exceeds the limit of 8 bytes"));
  EXPECT_TRUE(ReadJson("[1, 2, 3]", "config.json", doc, {.max_bytes = 9}).ok());
}

TEST(JsonReaderTest, SyntaxErrorsNameWhatAndOffset) {
  rapidjson::Document doc;
  absl::Status s = ReadJson("{\"a\": }", "tokenizer.json", doc);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tokenizer.json: invalid JSON at byte offset 6"));
  EXPECT_FALSE(ReadJson("", "x", doc).ok());
  EXPECT_FALSE(ReadJson("[1] [2]", "x", doc).ok());
  EXPECT_THAT(ReadJson(std::string("[1]\0[2]", 7), "x", doc).message(), HasSubstr("NUL byte"));
}

TEST(JsonReaderTest, RejectsInvalidUtf8InStrings) {
  rapidjson::Document doc;
  absl::Status s = ReadJson("{\"model\": \"a\xff\"}", "request body", doc);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("request body: invalid JSON at byte offset"));
  EXPECT_THAT(s.message(), HasSubstr("encoding"));
  ASSERT_TRUE(ReadJson("{\"model\": \"caf\xc3\xa9 \\u00e9\"}", "request body", doc).ok());
  EXPECT_STREQ(doc["model"].GetString(), "caf\xc3\xa9 \xc3\xa9");
}

TEST(JsonReaderTest, LongZeroRunNumberIsParsedNotACrash) {
  // RapidJSON's full-precision path read outside its table for this number (SIGSEGV).
  const std::string number = "0." + std::string(370, '0') + "8899831653300944850";
  rapidjson::Document doc;
  ASSERT_TRUE(ReadJson("{\"temperature\": " + number + "}", "request body", doc).ok());
  EXPECT_GE(doc["temperature"].GetDouble(), 0.0);
  EXPECT_LT(doc["temperature"].GetDouble(), 1e-300);
  ASSERT_TRUE(ReadJson("0.1", "x", doc).ok());
  EXPECT_EQ(doc.GetDouble(), 0.1);
}

}  // namespace
}  // namespace infera
