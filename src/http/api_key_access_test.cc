#include "http/api_key_access.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/http_status.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

struct Case {
  const char* method;
  const char* path;
  bool open;
  uint8_t right;
  std::optional<std::string> model;
  bool every_model;
};

TEST(HttpKeyAccessTest, EveryRouteFamily) {
  const Case cases[] = {
      {"GET", "/v2/health/live", true, kRightRead, std::nullopt, false},
      {"GET", "/v2/health/ready", true, kRightRead, std::nullopt, false},
      {"GET", "/console", true, kRightRead, std::nullopt, false},
      {"GET", "/console/app.js", true, kRightRead, std::nullopt, false},
      {"GET", "/v2/console/stream", false, kRightRead, std::nullopt, true},
      {"GET", "/metrics", false, kRightRead, std::nullopt, true},
      {"GET", "/v2", false, kRightRead, std::nullopt, false},
      {"GET", "/v2/models/stats", false, kRightRead, std::nullopt, true},
      {"GET", "/v2/models/resnet", false, kRightRead, "resnet", false},
      {"GET", "/v2/models/res%20net/versions/2/config", false, kRightRead, "res net", false},
      {"GET", "/v2/models/resnet/ready", false, kRightRead, "resnet", false},
      {"POST", "/v2/models/resnet/infer", false, kRightInfer, "resnet", false},
      {"POST", "/v2/models/resnet/versions/1/infer", false, kRightInfer, "resnet", false},
      {"POST", "/v2/models/llm/generate", false, kRightInfer, "llm", false},
      {"POST", "/v2/models/llm/generate_stream", false, kRightInfer, "llm", false},
      {"GET", "/v2/models/m/trace/setting", false, kRightRead, "m", false},
      {"POST", "/v2/models/m/trace/setting", false, kRightAdmin, "m", false},
      {"GET", "/v2/trace/setting", false, kRightRead, std::nullopt, false},
      {"POST", "/v2/trace/setting", false, kRightAdmin, std::nullopt, false},
      {"GET", "/v2/logging", false, kRightAdmin, std::nullopt, false},
      {"POST", "/v2/repository/index", false, kRightRead, std::nullopt, false},
      {"POST", "/v2/repository/models/m/load", false, kRightAdmin, "m", false},
      {"POST", "/v2/repository/models/m/canary/promote", false, kRightAdmin, "m", false},
      {"GET", "/v2/systemsharedmemory/status", false, kRightRead, std::nullopt, false},
      {"POST", "/v2/systemsharedmemory/region/r/register", false, kRightAdmin, std::nullopt, false},
      {"POST", "/v2/cudasharedmemory/unregister", false, kRightAdmin, std::nullopt, false},
      {"GET", "/v1/models", false, kRightRead, std::nullopt, false},
      {"GET", "/v1/models/fortune", false, kRightRead, "fortune", false},
      {"POST", "/v1/completions", false, kRightInfer, std::nullopt, false},
      {"POST", "/v1/chat/completions", false, kRightInfer, std::nullopt, false},
      {"POST", "/v1/embeddings", false, kRightInfer, std::nullopt, false},
      {"GET", "/nowhere", false, kRightRead, std::nullopt, false},
  };
  for (const Case& c : cases) {
    const HttpKeyAccess access = HttpKeyAccessFor(c.method, c.path);
    EXPECT_EQ(access.open, c.open) << c.path;
    if (c.open) continue;
    EXPECT_EQ(access.right, c.right) << c.method << " " << c.path;
    EXPECT_EQ(access.model, c.model) << c.path;
    EXPECT_EQ(access.every_model, c.every_model) << c.path;
  }
}

TEST(HttpKeyAccessTest, KeyInQueryString) {
  EXPECT_EQ(KeyInQueryString("/v2/models/m"), std::nullopt);
  EXPECT_EQ(KeyInQueryString("/v2?x=1&keys=2"), std::nullopt);
  EXPECT_EQ(KeyInQueryString("/v2?api_key=abc"), "api_key");
  EXPECT_EQ(KeyInQueryString("/v2?x=1&KEY=abc"), "key");
  EXPECT_EQ(KeyInQueryString("/v2?access_token"), "access_token");
  EXPECT_EQ(KeyInQueryString("/v2?api%5Fkey=abc"), "api_key");
}

class CheckHttpApiKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = testing::TempDir() + "/http_api_keys.txt";
    std::ofstream(path) << "a sha256:" << DigestHex(DigestOf("secret-a"))
                        << " rights=read,infer models=resnet* rps=1\n";
    ApiKeyStore::Options options;
    options.key_file = path;
    options.clock = &clock_;
    store_ = std::move(*ApiKeyStore::Create(std::move(options)));
  }
  static HttpRequest Request(std::string method, std::string target, std::string key = "") {
    HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    if (!key.empty()) request.headers.emplace_back("authorization", "Bearer " + key);
    return request;
  }

  FakeClock clock_;
  std::unique_ptr<ApiKeyStore> store_;
};

TEST_F(CheckHttpApiKeyTest, RefusalsAndTheGrant) {
  HttpRequest health = Request("GET", "/v2/health/ready");
  EXPECT_TRUE(CheckHttpApiKey(*store_, health).ok());
  EXPECT_EQ(health.api_key, nullptr);

  HttpRequest missing = Request("POST", "/v2/models/resnet/infer");
  const absl::Status no_key = CheckHttpApiKey(*store_, missing);
  HttpResponse response = ApiKeyDeniedResponse(ErrorResponse(no_key), no_key);
  EXPECT_EQ(response.status, 401);
  EXPECT_THAT(response.headers, ::testing::Contains(std::pair<std::string, std::string>("WWW-Authenticate", "Bearer")));

  HttpRequest query = Request("GET", "/v2/health/live?api_key=secret-a");
  const absl::Status in_query = CheckHttpApiKey(*store_, query);
  EXPECT_EQ(ErrorResponse(in_query).status, 400);
  EXPECT_THAT(std::string(in_query.message()), HasSubstr("parameter 'api_key'"));
  EXPECT_THAT(std::string(in_query.message()), ::testing::Not(HasSubstr("secret-a")));

  HttpRequest other_model = Request("POST", "/v2/models/bert/infer", "secret-a");
  EXPECT_EQ(ErrorResponse(CheckHttpApiKey(*store_, other_model)).status, 403);

  HttpRequest admin = Request("POST", "/v2/repository/models/resnet/load", "secret-a");
  EXPECT_EQ(ErrorResponse(CheckHttpApiKey(*store_, admin)).status, 403);

  HttpRequest ok = Request("POST", "/v2/models/resnet50/infer", "secret-a");
  ASSERT_TRUE(CheckHttpApiKey(*store_, ok).ok());
  ASSERT_NE(ok.api_key, nullptr);
  EXPECT_EQ(ok.api_key->entry.id, "a");

  HttpRequest over = Request("POST", "/v2/models/resnet50/infer", "secret-a");
  const absl::Status quota = CheckHttpApiKey(*store_, over);
  response = ApiKeyDeniedResponse(ErrorResponse(quota), quota);
  EXPECT_EQ(response.status, 429);
  EXPECT_THAT(response.headers, ::testing::Contains(std::pair<std::string, std::string>("Retry-After", "1")));
}

}  // namespace
}  // namespace infera
