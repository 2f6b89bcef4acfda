#include "protocol/model_answers.h"

#include "backend/builtin/builtin_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/test_model_repository.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSimple[] = R"pb(
  name: "simple" backend: "add_sub" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
)pb";

class ModelAnswersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.AddModel("simple", kSimple);
    registry_.Register(CreateAddSubBackend());
    auto manager = repo_.Load(&registry_);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
  }
  void TearDown() override {
    manager_.reset();
  }
  absl::StatusOr<inference::TraceSettingResponse> Trace(const std::string& model,
                                                       std::vector<std::pair<std::string, std::vector<std::string>>> changes) {
    inference::TraceSettingRequest request;
    request.set_model_name(model);
    for (auto& [name, values] : changes) {
      auto& value = (*request.mutable_settings())[name];
      for (auto& v : values) value.add_value(v);
    }
    inference::TraceSettingResponse response;
    absl::Status status = BuildTraceSetting(*manager_, settings_, request, &response);
    if (!status.ok()) return status;
    return response;
  }

  TestModelRepository repo_{"protocol_test"};
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
  TraceSettings settings_{TraceSettings::FromFraction(1, true), true};
};

TEST_F(ModelAnswersTest, MetadataAndErrorsUseTritonsWording) {
  inference::ModelMetadataResponse metadata;
  ASSERT_TRUE(BuildModelMetadata(*manager_, "simple", std::nullopt, &metadata).ok());
  EXPECT_THAT(metadata.versions(), ElementsAre("1"));
  EXPECT_THAT(metadata.inputs(0).shape(), ElementsAre(-1, 2));
  inference::ModelMetadataResponse none;
  absl::Status unknown = BuildModelMetadata(*manager_, "nope", std::nullopt, &none);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown.message(), "Request for unknown model: 'nope' is not found");
  absl::Status version = BuildModelMetadata(*manager_, "simple", 9, &none);
  EXPECT_THAT(std::string(version.message()), HasSubstr("Request for unknown model: 'simple' version 9 is not found"));
}

TEST_F(ModelAnswersTest, StatisticsCarryEveryDurationTritonReports) {
  inference::ModelStatisticsResponse stats;
  ASSERT_TRUE(BuildModelStatistics(*manager_, "", std::nullopt, &stats).ok());
  ASSERT_EQ(stats.model_stats_size(), 1);
  EXPECT_EQ(stats.model_stats(0).version(), "1");
  EXPECT_TRUE(stats.model_stats(0).inference_stats().has_cache_hit());
  EXPECT_TRUE(stats.model_stats(0).inference_stats().has_cache_miss());
  inference::ModelStatisticsResponse bad;
  EXPECT_EQ(BuildModelStatistics(*manager_, "", 1, &bad).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ModelAnswersTest, ModelControlNeedsExplicitMode) {
  // The fixture's manager is in the default mode (none).
  absl::Status control = CheckExplicitModelControl(*manager_);
  EXPECT_EQ(control.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(control.message()), HasSubstr("explicit model load / unload is not allowed"));
}

TEST_F(ModelAnswersTest, RepositoryIndexFiltersReady) {
  inference::RepositoryIndexResponse index;
  BuildRepositoryIndex(*manager_, true, &index);
  ASSERT_EQ(index.models_size(), 1);
  EXPECT_EQ(index.models(0).state(), "READY");
  EXPECT_EQ(index.models(0).version(), "1");
}

TEST_F(ModelAnswersTest, TraceSettingReadsUpdatesAndClearsWithAnEmptyList) {
  auto global = Trace("", {});
  ASSERT_TRUE(global.ok()) << global.status();
  EXPECT_THAT(global->settings().at("trace_level").value(), ElementsAre("TIMESTAMPS"));
  auto model = Trace("simple", {{"trace_rate", {"7"}}});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(model->settings().at("trace_rate").value(), ElementsAre("7"));
  EXPECT_THAT(Trace("", {})->settings().at("trace_rate").value(), ElementsAre("1"));
  // gRPC's form of JSON null: a setting with no values clears the model's override.
  auto cleared = Trace("simple", {{"trace_rate", {}}});
  ASSERT_TRUE(cleared.ok());
  EXPECT_THAT(cleared->settings().at("trace_rate").value(), ElementsAre("1"));
  auto unknown = Trace("nope", {});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Trace("", {{"trace_level", {"TENSORS"}}}).status().code(), absl::StatusCode::kInvalidArgument);
  // Errors name the first bad setting in name order, whatever the map's order.
  EXPECT_THAT(std::string(Trace("", {{"zzz", {"1"}}, {"aaa", {"1"}}}).status().message()),
              HasSubstr("'aaa'"));
}

TEST(ConfigOverrideTest, ParsesTritonsJsonAndNamesTheParameterWhenBad) {
  auto config = ParseConfigOverride(R"({"name": "m", "max_batch_size": 4, "backend": "identity"})", "parameter 'config'");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size(), 4);
  auto bad = ParseConfigOverride(R"({"max_batch_size": "many"})", "parameters.config");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("parameters.config is not a valid model config"));
  EXPECT_EQ(ParseConfigOverride("{", "x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseConfigOverride(std::string(200, '[') + std::string(200, ']'), "x").status().code(),
            absl::StatusCode::kInvalidArgument);  // the JSON reader's nesting limit
}

TEST(RoutingKeyTest, ParameterFirstThenHeader) {
  Parameters params;
  EXPECT_EQ(RoutingKey(params, std::nullopt), "");
  EXPECT_EQ(RoutingKey(params, std::string_view("user-7")), "user-7");
  params["routing_key"] = std::string("abc");
  EXPECT_EQ(RoutingKey(params, std::string_view("user-7")), "abc");
  params["routing_key"] = int64_t{42};
  EXPECT_EQ(RoutingKey(params, std::string_view("user-7")), "42");
  params["routing_key"] = std::string();
  EXPECT_EQ(RoutingKey(params, std::string_view("user-7")), "user-7");
}

}  // namespace
}  // namespace infera
