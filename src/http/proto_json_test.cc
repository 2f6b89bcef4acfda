#include "http/proto_json.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "model_config.pb.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

inference::ModelConfig Parse(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

TEST(ProtoJsonTest, PrintsLikeTritonsConfigEndpoint) {
  const std::string json = ProtoToJson(Parse(R"pb(
    name: "simple" backend: "add_sub" max_batch_size: 8
    input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
    output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 3 ] reshape { shape: [ 3 ] } } ]
    instance_group [ { count: 2 kind: KIND_CPU } ]
    parameters { key: "b" value { string_value: "2" } }
    parameters { key: "a" value { string_value: "1" } }
    version_policy { latest { num_versions: 1 } }
  )pb"));
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  ASSERT_FALSE(doc.HasParseError()) << json;
  EXPECT_STREQ(doc["name"].GetString(), "simple");
  EXPECT_EQ(doc["max_batch_size"].GetInt(), 8);
  EXPECT_STREQ(doc["platform"].GetString(), "");  // defaults are printed
  const auto& input = doc["input"][0];
  EXPECT_STREQ(input["data_type"].GetString(), "TYPE_INT32");  // enums by name
  ASSERT_TRUE(input["dims"][0].IsInt64());                     // int64 as a number
  EXPECT_EQ(input["dims"][0].GetInt64(), 16);
  EXPECT_FALSE(input["optional"].GetBool());
  EXPECT_FALSE(input.HasMember("reshape"));  // unset message
  EXPECT_EQ(doc["output"][0]["dims"][0].GetInt64(), -1);
  EXPECT_EQ(doc["output"][0]["reshape"]["shape"][0].GetInt64(), 3);
  EXPECT_STREQ(doc["instance_group"][0]["kind"].GetString(), "KIND_CPU");
  EXPECT_EQ(doc["version_policy"]["latest"]["num_versions"].GetUint(), 1u);
  EXPECT_FALSE(doc["version_policy"].HasMember("all"));  // unset oneof member
  EXPECT_FALSE(doc.HasMember("dynamic_batching"));
  EXPECT_STREQ(doc["parameters"]["a"]["string_value"].GetString(), "1");
  EXPECT_THAT(json, HasSubstr(R"("parameters":{"a":{"string_value":"1"},"b":)"));  // sorted
  EXPECT_THAT(json, Not(HasSubstr("maxBatchSize")));
}

TEST(ProtoJsonTest, MapsWithIntegerKeysAndEmptyOneofMessages) {
  const std::string json = ProtoToJson(Parse(R"pb(
    dynamic_batching { max_queue_delay_microseconds: 100
                       priority_queue_policy { key: 2 value { max_queue_size: 4 } } }
    version_policy { all { } }
  )pb"));
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  ASSERT_FALSE(doc.HasParseError()) << json;
  EXPECT_EQ(doc["dynamic_batching"]["max_queue_delay_microseconds"].GetUint64(), 100u);
  EXPECT_EQ(doc["dynamic_batching"]["priority_queue_policy"]["2"]["max_queue_size"].GetUint(), 4u);
  EXPECT_TRUE(doc["version_policy"]["all"].IsObject());
}

}  // namespace
}  // namespace infera
