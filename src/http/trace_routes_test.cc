#include "http/trace_routes.h"

#include "backend/builtin/builtin_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/test_model_repository.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

class TraceRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.AddModel("simple", R"pb(
      backend: "add_sub" max_batch_size: 8
      input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
      output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
    )pb");
    registry_.Register(CreateAddSubBackend());
    auto manager = repo_.Load(&registry_);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
  }
  void TearDown() override {
    manager_.reset();
  }
  HttpResponse Call(const std::string& method, const std::string& target, const std::string& body = "",
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
    HttpRequest request;
    request.method = method;
    request.target = target;
    request.body = body;
    request.headers = std::move(headers);
    return HandleTraceSettingRequest(request, *manager_, settings_, guard_);
  }
  static rapidjson::Document Json(const HttpResponse& response) {
    rapidjson::Document doc;
    doc.Parse(response.body.c_str());
    return doc;
  }

  TestModelRepository repo_{"trace_routes_test"};
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
  TraceSettings settings_{TraceSettings::FromFraction(0.001, true), true};
  // --allow-admin-api=trace: updates open to every client.
  AdminGuard guard_ = [] {
    AdminGuard::Options options;
    options.opened = {ApiCategory::kTrace};
    return *AdminGuard::Create(std::move(options));
  }();
};

TEST_F(TraceRoutesTest, MatchesOnlyTheTwoPaths) {
  EXPECT_TRUE(IsTraceSettingPath("/v2/trace/setting"));
  EXPECT_TRUE(IsTraceSettingPath("/v2/models/simple/trace/setting"));
  EXPECT_FALSE(IsTraceSettingPath("/v2/trace"));
  EXPECT_FALSE(IsTraceSettingPath("/v2/models/simple/versions/1/trace/setting"));
  EXPECT_FALSE(IsTraceSettingPath("/v2/models/simple/infer"));
}

TEST_F(TraceRoutesTest, GetAnswersTritonsShape) {
  HttpResponse response = Call("GET", "/v2/trace/setting");
  ASSERT_EQ(response.status, 200) << response.body;
  rapidjson::Document doc = Json(response);
  ASSERT_TRUE(doc["trace_level"].IsArray());
  EXPECT_STREQ(doc["trace_level"][0].GetString(), "TIMESTAMPS");
  EXPECT_STREQ(doc["trace_rate"].GetString(), "1000");
  EXPECT_STREQ(doc["trace_count"].GetString(), "-1");
  EXPECT_STREQ(doc["log_frequency"].GetString(), "0");
  EXPECT_STREQ(doc["trace_file"].GetString(), "");
  EXPECT_STREQ(doc["trace_mode"].GetString(), "opentelemetry");
}

TEST_F(TraceRoutesTest, PostUpdatesAModelAndNullClears) {
  HttpResponse set = Call("POST", "/v2/models/simple/trace/setting",
                          R"({"trace_rate": "5", "trace_level": ["OFF"], "trace_count": 3})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_STREQ(Json(set)["trace_rate"].GetString(), "5");
  EXPECT_STREQ(Json(set)["trace_count"].GetString(), "3");
  EXPECT_STREQ(Json(Call("GET", "/v2/trace/setting"))["trace_rate"].GetString(), "1000");
  HttpResponse cleared = Call("POST", "/v2/models/simple/trace/setting", R"({"trace_rate": null})");
  ASSERT_EQ(cleared.status, 200) << cleared.body;
  EXPECT_STREQ(Json(cleared)["trace_rate"].GetString(), "1000");
  EXPECT_STREQ(Json(cleared)["trace_level"][0].GetString(), "OFF");
}

TEST_F(TraceRoutesTest, HostileBodiesAre400sNamingTheProblem) {
  const std::pair<std::string, std::string> cases[] = {
      {"[1]", "must be a JSON object"},
      {"{", "trace settings"},
      {R"({"trace_rate": true})", "must be a string, an array of strings or null"},
      {R"({"trace_level": [1]})", "must be an array of strings"},
      {R"({"trace_level": []})", "empty array"},
      {R"({"trace_rate": "1", "trace_rate": "2"})", "given more than once"},
      {R"({"trace_rate": "-5"})", "must be an integer in [0, "},
      {R"({"trace_count": "10000000000"})", "must be an integer in [-1, 2147483647]"},
      {R"({"trace_rate": 1.5})", "must be a string"},
      {R"({"trace_level": ["TENSORS"]})", "TENSORS is not supported"},
      {R"({"trace_file": "/etc/passwd"})", "trace file location can not be updated through network protocol"},
      {R"({"bogus": "1"})", "unknown trace setting 'bogus'"},
      {std::string(100, '[') + std::string(100, ']'), "trace settings"},
  };
  for (const auto& [body, expected] : cases) {
    HttpResponse response = Call("POST", "/v2/trace/setting", body);
    EXPECT_EQ(response.status, 400) << body;
    EXPECT_THAT(response.body, HasSubstr(expected)) << body;
  }
  EXPECT_STREQ(Json(Call("GET", "/v2/trace/setting"))["trace_rate"].GetString(), "1000");
}

TEST_F(TraceRoutesTest, UnknownModelMethodAndEscape) {
  HttpResponse unknown = Call("GET", "/v2/models/nope/trace/setting");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_THAT(unknown.body, HasSubstr("Request for unknown model : nope"));  // Triton's trace text
  HttpResponse method = Call("DELETE", "/v2/trace/setting");
  EXPECT_EQ(method.status, 405);
  EXPECT_EQ(Call("GET", "/v2/models/%zz/trace/setting").status, 400);
}

// The default server: reading stays open, changing is closed and names how to open it.
TEST_F(TraceRoutesTest, UpdatesAreClosedByDefault) {
  guard_ = *AdminGuard::Create({});
  const std::string before = Call("GET", "/v2/trace/setting").body;
  HttpResponse update = Call("POST", "/v2/trace/setting", R"({"trace_rate": "1"})");
  EXPECT_EQ(update.status, 403);
  EXPECT_THAT(update.body, HasSubstr("--allow-admin-api=trace"));
  EXPECT_EQ(Call("POST", "/v2/models/simple/trace/setting", R"({"trace_level": ["OFF"]})").status, 403);
  EXPECT_EQ(Call("GET", "/v2/models/simple/trace/setting").status, 200);
  EXPECT_EQ(Call("GET", "/v2/trace/setting").body, before);
}

TEST_F(TraceRoutesTest, GuardRestrictsReadsAndTokensUpdates) {
  AdminGuard::Options options;
  options.admin_token = "secret";
  options.restrictions = {*ParseApiRestriction("trace:x-trace=ok")};
  guard_ = *AdminGuard::Create(options);
  EXPECT_EQ(Call("GET", "/v2/trace/setting").status, 403);
  EXPECT_EQ(Call("GET", "/v2/trace/setting", "", {{"x-trace", "ok"}}).status, 200);
  EXPECT_EQ(Call("POST", "/v2/trace/setting", R"({"trace_rate": "1"})", {{"x-trace", "ok"}}).status, 401);
  EXPECT_EQ(Call("POST", "/v2/trace/setting", R"({"trace_rate": "1"})",
                 {{"x-trace", "ok"}, {"authorization", "Bearer secret"}})
                .status,
            200);
}

}  // namespace
}  // namespace infera
