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

// A backend whose loaded model reports load-time facts (as the pytorch backend does for
// PRECISION) and whose instances echo nothing: only the config answer is under test.
class ReportingBackend final : public Backend {
 public:
  std::string_view name() const override { return "reporting"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
    return std::make_unique<Loaded>();
  }

 private:
  class Instance final : public ModelInstance {
   public:
    absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor>, const ExecutionContext&) override {
      return absl::InternalError("not used");
    }
  };
  class Loaded final : public LoadedModel {
   public:
    absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
      return std::make_unique<Instance>();
    }
    std::vector<std::pair<std::string, std::string>> ReportedParameters() const override {
      return {{"infera.precision", "bf16"}, {"infera.precision.cosine", "0.99998"}};
    }
  };
};

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

TEST(ModelAnswersReportedTest, ConfigAnswerCarriesTheBackendsReportedParameters) {
  TestModelRepository repo{"protocol_reported_test"};
  repo.AddModel("simple", kSimple);
  repo.AddModel("reporting", R"pb(
    name: "reporting" backend: "reporting" max_batch_size: 0
    input [ { name: "IN" data_type: TYPE_FP32 dims: [ 1 ] } ]
    output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 1 ] } ]
    parameters { key: "PRECISION" value: { string_value: "bf16" } }
  )pb");
  BackendRegistry registry;
  registry.Register(CreateAddSubBackend());
  registry.Register(std::make_unique<ReportingBackend>());
  auto manager = repo.Load(&registry);
  ASSERT_TRUE(manager.ok()) << manager.status();
  inference::ModelConfigResponse reporting;
  ASSERT_TRUE(BuildModelConfig(**manager, "reporting", std::nullopt, &reporting).ok());
  const auto& parameters = reporting.config().parameters();
  ASSERT_TRUE(parameters.contains("infera.precision"));
  EXPECT_EQ(parameters.at("infera.precision").string_value(), "bf16");
  EXPECT_EQ(parameters.at("infera.precision.cosine").string_value(), "0.99998");
  EXPECT_EQ(parameters.at("PRECISION").string_value(), "bf16");  // the config's own stay
  // A backend that reports nothing leaves the config as it is.
  inference::ModelConfigResponse simple;
  ASSERT_TRUE(BuildModelConfig(**manager, "simple", std::nullopt, &simple).ok());
  EXPECT_TRUE(simple.config().parameters().empty());
}

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
  EXPECT_EQ(unknown.status().message(), "Request for unknown model : nope");
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
