#include "tools/analyze/config_render.h"

#include <google/protobuf/util/json_util.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rapidjson/document.h"
#include "repository/model_config_loader.h"
#include "tools/analyze/dimensions.h"

namespace infera::analyze {
namespace {

using ::testing::HasSubstr;

constexpr char kSimple[] = R"pb(
name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
instance_group [ { count: 2 kind: KIND_CPU }, { count: 1 kind: KIND_CPU } ]
)pb";

inference::ModelConfig Base() {
  auto config = ParseModelConfig(kSimple, "config.pbtxt");
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(ConfigRenderTest, ApplyPointChangesOnlyTheChosenFields) {
  const ConfigPoint point = {{"instances", "3"}, {"batch", "4"}, {"queue_delay_us", "200"}};
  auto config = ApplyPoint(Base(), point, Dimensions());
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->instance_group_size(), 1);
  EXPECT_EQ(config->instance_group(0).count(), 3);
  EXPECT_EQ(config->instance_group(0).kind(), inference::ModelInstanceGroup::KIND_CPU);
  EXPECT_EQ(config->max_batch_size(), 8);  // the model's: clients may still send 8 rows
  ASSERT_TRUE(config->has_dynamic_batching());
  EXPECT_THAT(config->dynamic_batching().preferred_batch_size(), ::testing::ElementsAre(4));
  EXPECT_EQ(config->dynamic_batching().max_queue_delay_microseconds(), 200u);
  EXPECT_EQ(config->input_size(), 2);  // the rest is the model's own
  EXPECT_EQ(config->backend(), "add_sub");
}

TEST(ConfigRenderTest, BatchingOffDropsDynamicBatchingAndIgnoresTheDelay) {
  inference::ModelConfig base = Base();
  base.mutable_dynamic_batching()->set_max_queue_delay_microseconds(500);
  const ConfigPoint point = {{"instances", "1"}, {"batch", "off"}, {"queue_delay_us", "800"}};
  auto config = ApplyPoint(base, point, Dimensions());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->has_dynamic_batching());
  EXPECT_EQ(config->max_batch_size(), 8);
  EXPECT_EQ(DescribePoint(point, Dimensions()), "instances=1 batch=off");
}

TEST(ConfigRenderTest, PrecisionIsAParameter) {
  auto config = ApplyPoint(Base(), {{"precision", "bf16"}}, Dimensions());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->parameters().at("PRECISION").string_value(), "bf16");
}

TEST(ConfigRenderTest, ReducedPrecisionPointsLoadWithValidation) {
  // bf16 / int8_dynamic / fp16 are compared with fp32 at load (the backend's floors):
  // a point below them is refused, not measured.
  for (const char* value : {"bf16", "int8_dynamic", "fp16"}) {
    auto config = ApplyPoint(Base(), {{"precision", value}}, Dimensions());
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->parameters().at("PRECISION").string_value(), value);
    ASSERT_TRUE(config->parameters().contains("VALIDATE_PRECISION")) << value;
    EXPECT_EQ(config->parameters().at("VALIDATE_PRECISION").string_value(), "true") << value;
    // The written config keeps both, so a production load validates the same way.
    auto text = RenderConfigText(*config, "test");
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_THAT(*text, HasSubstr("VALIDATE_PRECISION")) << value;
  }
  // fp32 is the reference itself: nothing to validate.
  auto fp32 = ApplyPoint(Base(), {{"precision", "fp32"}}, Dimensions());
  ASSERT_TRUE(fp32.ok()) << fp32.status();
  EXPECT_EQ(fp32->parameters().at("PRECISION").string_value(), "fp32");
  EXPECT_FALSE(fp32->parameters().contains("VALIDATE_PRECISION"));
}

TEST(ConfigRenderTest, HostilePointsNameTheProblem) {
  auto unknown = ApplyPoint(Base(), {{"threads", "4"}}, Dimensions());
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown dimension 'threads'"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("instances"));
  for (const char* bad : {"-1", "0", "two", "1e3", ""}) {
    auto r = ApplyPoint(Base(), {{"instances", bad}}, Dimensions());
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("dimension instances")) << bad;
  }
  EXPECT_FALSE(ApplyPoint(Base(), {{"batch", "-4"}}, Dimensions()).ok());
  EXPECT_FALSE(ApplyPoint(Base(), {{"batch", "4"}, {"queue_delay_us", "-1"}}, Dimensions()).ok());
}

TEST(ConfigRenderTest, LoadOverrideBodyCarriesTheConfigAsJson) {
  auto config = ApplyPoint(Base(), {{"instances", "2"}, {"batch", "8"}, {"queue_delay_us", "100"}}, Dimensions());
  ASSERT_TRUE(config.ok());
  auto body = LoadOverrideBody(*config);
  ASSERT_TRUE(body.ok()) << body.status();
  rapidjson::Document doc;
  doc.Parse(body->c_str());
  ASSERT_FALSE(doc.HasParseError());
  ASSERT_TRUE(doc["parameters"]["config"].IsString());
  inference::ModelConfig back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(doc["parameters"]["config"].GetString(), &back).ok());
  EXPECT_EQ(back.SerializeAsString(), config->SerializeAsString());
}

TEST(ConfigRenderTest, RenderedTextLoadsAndValidates) {
  auto config = ApplyPoint(Base(), {{"instances", "2"}, {"batch", "4"}, {"queue_delay_us", "400"}}, Dimensions());
  ASSERT_TRUE(config.ok());
  auto text = RenderConfigText(*config, "infera analyze: instances=2 batch=4");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->rfind("# infera analyze", 0), 0u);
  auto parsed = ParseModelConfig(*text, "out/config.pbtxt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->SerializeAsString(), config->SerializeAsString());
  EXPECT_TRUE(ValidateModelConfig("out/config.pbtxt", "simple", *parsed).ok());
}

TEST(ConfigRenderTest, ReadBaseConfigNamesAMissingFile) {
  auto missing = ReadBaseConfig("/nonexistent/model");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/model"));
}

TEST(ConfigRenderTest, RenderEditedConfigKeepsTheUsersTextAndComments) {
  const std::string original = std::string("# the ranker, tuned by hand\n") + kSimple + "# end of file\n";
  auto base = ParseModelConfig(original, "config.pbtxt");
  ASSERT_TRUE(base.ok()) << base.status();
  auto config = ApplyPoint(*base, {{"instances", "2"}, {"batch", "4"}, {"queue_delay_us", "400"}}, Dimensions());
  ASSERT_TRUE(config.ok()) << config.status();
  auto text = RenderEditedConfig(original, *base, *config, "infera analyze: instances=2 batch=4");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->rfind("# infera analyze: instances=2 batch=4\n# the ranker, tuned by hand\n", 0), 0u) << *text;
  EXPECT_THAT(*text, HasSubstr("# end of file"));
  EXPECT_THAT(*text, HasSubstr("max_batch_size: 8\n"));
  auto parsed = ParseModelConfig(*text, "out/config.pbtxt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->SerializeAsString(), config->SerializeAsString());
}

}  // namespace
}  // namespace infera::analyze
