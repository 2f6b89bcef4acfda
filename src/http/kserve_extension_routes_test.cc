#include "http/kserve_extension_routes.h"

#include "absl/synchronization/notification.h"
#include "backend/builtin/builtin_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/test_model_repository.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

constexpr char kSimple[] = R"pb(
  name: "simple" backend: "add_sub" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
  version_policy { all { } }
)pb";

class KServeExtensionRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.AddModel("simple", kSimple, {1, 2});
    repo_.AddModel("broken", "backend: \"nope\"");
    registry_.Register(CreateAddSubBackend());
    auto manager = repo_.Load(&registry_);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
  }
  void TearDown() override {
    manager_.reset();
  }
  void Infer(int64_t version, int64_t rows) {
    auto model = manager_->GetModelVersion("simple", version);
    ASSERT_TRUE(model.ok());
    std::vector<int32_t> values(static_cast<size_t>(rows * 2), 3);
    InferRequest request;
    for (const char* name : {"INPUT0", "INPUT1"}) {
      request.inputs.push_back(Tensor{name, DataType::kInt32, {rows, 2},
                                      Buffer::Copy(values.data(), values.size() * 4)});
    }
    absl::Notification done;
    (*model)->Infer(std::move(request), [&](absl::StatusOr<InferResponse>, ResponseDelivery) { done.Notify(); });
    done.WaitForNotification();
  }
  static rapidjson::Document Json(const HttpResponse& response) {
    rapidjson::Document doc;
    doc.Parse(response.body.c_str());
    EXPECT_FALSE(doc.HasParseError()) << response.body;
    return doc;
  }

  TestModelRepository repo_{"http_extension_test"};
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
};

TEST_F(KServeExtensionRoutesTest, StatisticsInTritonsShape) {
  Infer(2, 2);
  Infer(2, 1);
  HttpResponse response = ModelStatisticsResponse(*manager_, "simple", 2);
  ASSERT_EQ(response.status, 200) << response.body;
  rapidjson::Document doc = Json(response);
  ASSERT_EQ(doc["model_stats"].Size(), 1u);
  const auto& s = doc["model_stats"][0];
  EXPECT_STREQ(s["name"].GetString(), "simple");
  EXPECT_STREQ(s["version"].GetString(), "2");
  EXPECT_GT(s["last_inference"].GetUint64(), 0u);
  EXPECT_EQ(s["inference_count"].GetUint64(), 3u);
  EXPECT_EQ(s["execution_count"].GetUint64(), 2u);
  EXPECT_EQ(s["inference_stats"]["success"]["count"].GetUint64(), 2u);
  EXPECT_GT(s["inference_stats"]["success"]["ns"].GetUint64(), 0u);
  EXPECT_EQ(s["inference_stats"]["fail"]["count"].GetUint64(), 0u);
  for (const char* stage : {"queue", "compute_input", "compute_infer", "compute_output"}) {
    EXPECT_EQ(s["inference_stats"][stage]["count"].GetUint64(), 2u) << stage;
  }
  EXPECT_EQ(s["inference_stats"]["cache_hit"]["count"].GetUint64(), 0u);
  ASSERT_EQ(s["batch_stats"].Size(), 2u);
  EXPECT_EQ(s["batch_stats"][0]["batch_size"].GetUint64(), 1u);
  EXPECT_EQ(s["batch_stats"][1]["batch_size"].GetUint64(), 2u);
  EXPECT_EQ(s["batch_stats"][1]["compute_infer"]["count"].GetUint64(), 1u);

  EXPECT_EQ(Json(ModelStatisticsResponse(*manager_, "simple", std::nullopt))["model_stats"].Size(), 2u);
  EXPECT_EQ(Json(ModelStatisticsResponse(*manager_, "", std::nullopt))["model_stats"].Size(), 2u);
  EXPECT_EQ(ModelStatisticsResponse(*manager_, "nope", std::nullopt).status, 404);
  EXPECT_EQ(ModelStatisticsResponse(*manager_, "simple", 9).status, 404);
}

TEST_F(KServeExtensionRoutesTest, ConfigIsTheModelConfigAsJson) {
  HttpResponse response = ModelConfigResponse(*manager_, "simple", std::nullopt);
  ASSERT_EQ(response.status, 200) << response.body;
  rapidjson::Document doc = Json(response);
  EXPECT_STREQ(doc["name"].GetString(), "simple");
  EXPECT_EQ(doc["max_batch_size"].GetInt(), 8);
  EXPECT_EQ(doc["input"][1]["dims"][0].GetInt64(), 2);
  EXPECT_EQ(ModelConfigResponse(*manager_, "nope", std::nullopt).status, 404);
  HttpResponse broken = ModelConfigResponse(*manager_, "broken", std::nullopt);
  EXPECT_EQ(broken.status, 503);
  EXPECT_THAT(broken.body, HasSubstr("nope"));
}

TEST_F(KServeExtensionRoutesTest, RepositoryIndexWithStatesAndReadyFilter) {
  rapidjson::Document all = Json(RepositoryIndexResponse(*manager_, ""));
  ASSERT_TRUE(all.IsArray());
  ASSERT_EQ(all.Size(), 3u);  // broken, simple 1, simple 2
  EXPECT_STREQ(all[0]["name"].GetString(), "broken");
  EXPECT_FALSE(all[0].HasMember("version"));
  EXPECT_STREQ(all[0]["state"].GetString(), "UNAVAILABLE");
  EXPECT_THAT(all[0]["reason"].GetString(), HasSubstr("nope"));
  EXPECT_STREQ(all[2]["version"].GetString(), "2");
  EXPECT_STREQ(all[2]["state"].GetString(), "READY");
  EXPECT_STREQ(all[2]["reason"].GetString(), "");
  EXPECT_EQ(Json(RepositoryIndexResponse(*manager_, R"({"ready": true})")).Size(), 2u);
  EXPECT_EQ(Json(RepositoryIndexResponse(*manager_, R"({"ready": false})")).Size(), 3u);
  EXPECT_EQ(RepositoryIndexResponse(*manager_, "{oops").status, 400);
  EXPECT_THAT(RepositoryIndexResponse(*manager_, R"({"ready": 1})").body, HasSubstr("true or false"));
}

}  // namespace
}  // namespace infera
