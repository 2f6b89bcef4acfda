#include "grpc/metadata_handlers.h"

#include "absl/synchronization/notification.h"
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
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
  version_policy { all { } }
)pb";

constexpr char kIdentity[] = R"pb(
  name: "echo" backend: "identity" max_batch_size: 0
  input [ { name: "IN" data_type: TYPE_STRING dims: [ -1 ] } ]
  output [ { name: "OUT" data_type: TYPE_STRING dims: [ -1 ] } ]
)pb";

class MetadataHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.AddModel("simple", kSimple, {1, 2});
    repo_.AddModel("echo", kIdentity);
    repo_.AddModel("broken", "backend: \"nope\"");
    registry_.Register(CreateAddSubBackend());
    registry_.Register(CreateIdentityBackend());
    auto manager = repo_.Load(&registry_);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
    handlers_ = std::make_unique<MetadataHandlers>(
        *manager_, MetadataHandlers::Options{"infera", "9.9", [this] { return ready_; }});
  }
  void TearDown() override {
    handlers_.reset();
    manager_.reset();
  }
  // Runs `rows` rows through simple version `version` and waits for the answer.
  void InferSimple(int64_t version, int64_t rows) {
    auto model = manager_->GetModelVersion("simple", version);
    ASSERT_TRUE(model.ok());
    std::vector<int32_t> values(static_cast<size_t>(rows * 4), 1);
    InferRequest request;
    for (const char* name : {"INPUT0", "INPUT1"}) {
      request.inputs.push_back(Tensor{name, DataType::kInt32, {rows, 4},
                                      Buffer::Copy(values.data(), values.size() * 4)});
    }
    absl::Notification done;
    (*model)->Infer(std::move(request), [&](absl::StatusOr<InferResponse> r, ResponseDelivery) {
      EXPECT_TRUE(r.ok()) << r.status();
      done.Notify();
    });
    done.WaitForNotification();
  }

  TestModelRepository repo_{"grpc_metadata_test"};
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
  std::unique_ptr<MetadataHandlers> handlers_;
  bool ready_ = true;
};

TEST_F(MetadataHandlersTest, ServerReadinessAndMetadata) {
  EXPECT_TRUE(handlers_->ServerReady());
  ready_ = false;
  EXPECT_FALSE(handlers_->ServerReady());
  inference::ServerMetadataResponse metadata;
  handlers_->ServerMetadata(&metadata);
  EXPECT_EQ(metadata.name(), "infera");
  EXPECT_EQ(metadata.version(), "9.9");
  EXPECT_THAT(metadata.extensions(),
              ElementsAre("binary_tensor_data", "parameters", "model_configuration",
                          "model_repository", "statistics", "logging", "classification", "trace",
                          "system_shared_memory"));
}

TEST_F(MetadataHandlersTest, ModelReadyIsFalseRatherThanAnError) {
  auto ready = [&](const std::string& name, const std::string& version) {
    inference::ModelReadyRequest request;
    request.set_name(name);
    request.set_version(version);
    inference::ModelReadyResponse response;
    EXPECT_TRUE(handlers_->ModelReady(request, &response).ok());
    return response.ready();
  };
  EXPECT_TRUE(ready("simple", ""));
  EXPECT_TRUE(ready("simple", "1"));
  EXPECT_FALSE(ready("simple", "7"));
  EXPECT_FALSE(ready("nope", ""));
  EXPECT_FALSE(ready("broken", ""));
  inference::ModelReadyRequest bad;
  bad.set_name("simple");
  bad.set_version("x");
  inference::ModelReadyResponse response;
  EXPECT_EQ(handlers_->ModelReady(bad, &response).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(MetadataHandlersTest, ModelMetadataListsVersionsAndTensors) {
  inference::ModelMetadataRequest request;
  request.set_name("simple");
  inference::ModelMetadataResponse response;
  ASSERT_TRUE(handlers_->ModelMetadata(request, &response).ok());
  EXPECT_EQ(response.name(), "simple");
  EXPECT_THAT(response.versions(), ElementsAre("1", "2"));
  EXPECT_EQ(response.platform(), "add_sub");
  ASSERT_EQ(response.inputs_size(), 2);
  EXPECT_EQ(response.inputs(0).datatype(), "INT32");
  EXPECT_THAT(response.inputs(0).shape(), ElementsAre(-1, 4));
  EXPECT_EQ(response.outputs(1).name(), "OUTPUT1");

  request.set_name("echo");
  response.Clear();
  ASSERT_TRUE(handlers_->ModelMetadata(request, &response).ok());
  EXPECT_EQ(response.inputs(0).datatype(), "BYTES");
  EXPECT_THAT(response.inputs(0).shape(), ElementsAre(-1));

  request.set_name("nope");
  EXPECT_EQ(handlers_->ModelMetadata(request, &response).code(), absl::StatusCode::kNotFound);
  request.set_name("broken");
  EXPECT_EQ(handlers_->ModelMetadata(request, &response).code(), absl::StatusCode::kUnavailable);
}

TEST_F(MetadataHandlersTest, ModelConfigIsTheLoadedConfig) {
  inference::ModelConfigRequest request;
  request.set_name("simple");
  request.set_version("1");
  inference::ModelConfigResponse response;
  ASSERT_TRUE(handlers_->ModelConfig(request, &response).ok());
  EXPECT_EQ(response.config().name(), "simple");
  EXPECT_EQ(response.config().max_batch_size(), 8);
  EXPECT_EQ(response.config().input(1).name(), "INPUT1");
  EXPECT_EQ(response.config().input(1).data_type(), inference::TYPE_INT32);
  request.set_version("3");
  EXPECT_EQ(handlers_->ModelConfig(request, &response).code(), absl::StatusCode::kNotFound);
}

TEST_F(MetadataHandlersTest, StatisticsCountRequestsRowsAndBatchSizes) {
  InferSimple(2, 1);
  InferSimple(2, 3);
  InferSimple(2, 3);
  InferSimple(1, 1);

  inference::ModelStatisticsRequest request;
  request.set_name("simple");
  request.set_version("2");
  inference::ModelStatisticsResponse response;
  ASSERT_TRUE(handlers_->ModelStatistics(request, &response).ok());
  ASSERT_EQ(response.model_stats_size(), 1);
  const inference::ModelStatistics& s = response.model_stats(0);
  EXPECT_EQ(s.name(), "simple");
  EXPECT_EQ(s.version(), "2");
  EXPECT_EQ(s.inference_count(), 7u);  // rows
  EXPECT_EQ(s.execution_count(), 3u);
  EXPECT_EQ(s.inference_stats().success().count(), 3u);
  EXPECT_GT(s.inference_stats().success().ns(), 0u);
  EXPECT_EQ(s.inference_stats().fail().count(), 0u);
  EXPECT_EQ(s.inference_stats().queue().count(), 3u);
  EXPECT_EQ(s.inference_stats().compute_infer().count(), 3u);
  EXPECT_GT(s.last_inference(), 1600000000000u);  // ms since the epoch
  ASSERT_EQ(s.batch_stats_size(), 2);
  EXPECT_EQ(s.batch_stats(0).batch_size(), 1u);
  EXPECT_EQ(s.batch_stats(0).compute_infer().count(), 1u);
  EXPECT_EQ(s.batch_stats(1).batch_size(), 3u);
  EXPECT_EQ(s.batch_stats(1).compute_infer().count(), 2u);

  request.clear_version();  // every ready version of the model
  response.Clear();
  ASSERT_TRUE(handlers_->ModelStatistics(request, &response).ok());
  ASSERT_EQ(response.model_stats_size(), 2);
  EXPECT_EQ(response.model_stats(0).version(), "1");
  EXPECT_EQ(response.model_stats(0).inference_count(), 1u);

  request.clear_name();  // every model
  response.Clear();
  ASSERT_TRUE(handlers_->ModelStatistics(request, &response).ok());
  EXPECT_EQ(response.model_stats_size(), 3);  // echo 1, simple 1, simple 2

  request.set_name("nope");
  EXPECT_EQ(handlers_->ModelStatistics(request, &response).code(), absl::StatusCode::kNotFound);
}

TEST_F(MetadataHandlersTest, RepositoryIndexShowsEveryModelAndFiltersReady) {
  inference::RepositoryIndexRequest request;
  inference::RepositoryIndexResponse response;
  handlers_->RepositoryIndex(request, &response);
  ASSERT_EQ(response.models_size(), 4);  // broken, echo 1, simple 1, simple 2
  EXPECT_EQ(response.models(0).name(), "broken");
  EXPECT_EQ(response.models(0).version(), "");
  EXPECT_EQ(response.models(0).state(), "UNAVAILABLE");
  EXPECT_THAT(response.models(0).reason(), HasSubstr("nope"));
  EXPECT_EQ(response.models(3).name(), "simple");
  EXPECT_EQ(response.models(3).version(), "2");
  EXPECT_EQ(response.models(3).state(), "READY");
  EXPECT_EQ(response.models(3).reason(), "");

  request.set_ready(true);
  response.Clear();
  handlers_->RepositoryIndex(request, &response);
  EXPECT_EQ(response.models_size(), 3);
}

}  // namespace
}  // namespace infera

namespace infera {
namespace {

TEST_F(MetadataHandlersTest, TraceSettingIsUnimplementedWithoutSettingsAndAnswersWithThem) {
  inference::TraceSettingRequest request;
  inference::TraceSettingResponse response;
  EXPECT_EQ(handlers_->TraceSetting(request, &response).code(), absl::StatusCode::kUnimplemented);
  TraceSettings settings(TraceSettings::FromFraction(0.5, true), true);
  MetadataHandlers with(*manager_, MetadataHandlers::Options{"infera", "9.9", {}, &settings});
  ASSERT_TRUE(with.TraceSetting(request, &response).ok());
  EXPECT_THAT(response.settings().at("trace_rate").value(), ElementsAre("2"));
  request.set_model_name("echo");
  (*request.mutable_settings())["trace_level"].add_value("OFF");
  response.Clear();
  ASSERT_TRUE(with.TraceSetting(request, &response).ok());
  EXPECT_THAT(response.settings().at("trace_level").value(), ElementsAre("OFF"));
  EXPECT_FALSE(settings.Sample("echo", std::nullopt).has_value());
  request.set_model_name("nope");
  EXPECT_EQ(with.TraceSetting(request, &response).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace infera
