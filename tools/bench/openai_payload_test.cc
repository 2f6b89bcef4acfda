#include "tools/bench/openai_payload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rapidjson/document.h"

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

rapidjson::Document BodyOf(const std::string& request) {
  rapidjson::Document doc;
  const std::string body = request.substr(request.find("\r\n\r\n") + 4);
  doc.Parse(body.c_str());
  EXPECT_FALSE(doc.HasParseError());
  EXPECT_THAT(request, HasSubstr("Content-Length: " + std::to_string(body.size()) + "\r\n"));
  return doc;
}

TEST(OpenAiPayloadTest, CompletionsWithExactTokenIdPrompts) {
  OpenAiRequestOptions o{"127.0.0.1:8000", "fortune", false, 64, 32, 10, 20};
  const auto requests = MakeOpenAiHttpRequests(o, 3, 1);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_THAT(requests[0], HasSubstr("POST /v1/completions HTTP/1.1\r\n"));
  const auto doc = BodyOf(requests[0]);
  EXPECT_STREQ(doc["model"].GetString(), "fortune");
  ASSERT_EQ(doc["prompt"].Size(), 64u);
  for (const auto& id : doc["prompt"].GetArray()) {
    EXPECT_GE(id.GetInt(), 10);
    EXPECT_LT(id.GetInt(), 20);
  }
  EXPECT_EQ(doc["max_tokens"].GetInt(), 32);
  EXPECT_TRUE(doc["ignore_eos"].GetBool());
  EXPECT_TRUE(doc["stream"].GetBool());
  EXPECT_TRUE(doc["stream_options"]["include_usage"].GetBool());
  EXPECT_NE(requests[0], requests[1]);  // different prompts
  EXPECT_EQ(MakeOpenAiHttpRequests(o, 3, 1), requests);  // seeded
}

TEST(OpenAiPayloadTest, ChatWithWordPrompts) {
  OpenAiRequestOptions o{"h:1", "m", true, 16, 8, 0, 100};
  const auto requests = MakeOpenAiHttpRequests(o, 1, 1);
  EXPECT_THAT(requests[0], HasSubstr("POST /v1/chat/completions HTTP/1.1\r\n"));
  const auto doc = BodyOf(requests[0]);
  const std::string content = doc["messages"][0]["content"].GetString();
  EXPECT_EQ(std::count(content.begin(), content.end(), ' '), 15);
  EXPECT_STREQ(doc["messages"][0]["role"].GetString(), "user");
}

}  // namespace
}  // namespace infera::bench
