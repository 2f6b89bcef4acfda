#include "http/admin_access.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/http_status.h"

namespace infera {
namespace {

TEST(AdminAccessTest, ReadsHeadersAndAnswers401WithChallengeOr403) {
  AdminGuard::Options options;
  options.admin_token = "t";
  options.restrictions.push_back(*ParseApiRestriction("logging:x-admin=1"));
  const AdminGuard guard = *AdminGuard::Create(options);
  HttpRequest request{"POST", "/v2/logging", {{"authorization", "Bearer t"}}, "", {}, ""};
  absl::Status forbidden =
      CheckAdminAccess(guard, ApiCategory::kLogging, AdminGuard::Operation::kAdmin, request, "logging.update", "server");
  HttpResponse response = AdminDeniedResponse(forbidden);
  EXPECT_EQ(response.status, 403);
  EXPECT_THAT(response.body, ::testing::HasSubstr("x-admin"));
  EXPECT_TRUE(response.headers.empty());

  request.headers = {{"x-admin", "1"}};
  absl::Status unauthenticated =
      CheckAdminAccess(guard, ApiCategory::kLogging, AdminGuard::Operation::kAdmin, request, "logging.update", "server");
  response = AdminDeniedResponse(unauthenticated);
  EXPECT_EQ(response.status, 401);
  EXPECT_THAT(response.headers, ::testing::Contains(std::make_pair(std::string("WWW-Authenticate"),
                                                                   std::string("Bearer"))));
  request.headers.emplace_back("authorization", "Bearer t");
  EXPECT_TRUE(CheckAdminAccess(guard, ApiCategory::kLogging, AdminGuard::Operation::kAdmin, request, "logging.update", "server").ok());
}

// The audit lines written while `body` runs (the process's log pointed at a temp file).
template <typename Body>
std::string AuditLinesOf(Body body) {
  const std::string path = std::string("/tmp/infera_admin_access_audit_") + std::to_string(::getpid());
  ::unlink(path.c_str());
  InstallAuditLog(*AuditLog::OpenFile(path));
  body();
  InstallAuditLog(AuditLog::ToServerLog());
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  ::unlink(path.c_str());
  return contents.str();
}

TEST(AdminAccessTest, RefusalsAndOutcomesAreAuditedWithoutTheSecret) {
  AdminGuard::Options options;
  options.admin_token = "t0ken";
  const AdminGuard guard = *AdminGuard::Create(options);
  HttpRequest request{"POST", "/v2/logging", {{"authorization", "Bearer wrong"}}, "", {}, ""};
  request.peer = "10.0.0.7:4242";
  const std::string lines = AuditLinesOf([&] {
    EXPECT_FALSE(CheckAdminAccess(guard, ApiCategory::kLogging, AdminGuard::Operation::kAdmin, request,
                                  "logging.update", "server")
                     .ok());
    request.headers = {{"authorization", "Bearer t0ken"}};
    EXPECT_TRUE(CheckAdminAccess(guard, ApiCategory::kLogging, AdminGuard::Operation::kAdmin, request,
                                 "logging.update", "server")
                    .ok());  // allowed: nothing written yet
    AuditEvent event = HttpAdminAudit(guard, ApiCategory::kLogging, request, "logging.update", "server");
    AuditHttpResponse(event, HttpResponse{200, "application/json", "", {}});
    AuditHttpResponse(event, ErrorResponse(400, "bad \"level\""));
    AuditHttpResponse(event, HttpResponse{500, "text/plain", "not json", {}});
  });
  EXPECT_THAT(lines, ::testing::HasSubstr(
                         "\"credential\":\"admin-token\",\"peer\":\"10.0.0.7:4242\",\"transport\":\"http\","
                         "\"action\":\"logging.update\",\"target\":\"server\",\"outcome\":\"denied\"}\n"));
  EXPECT_THAT(lines, ::testing::HasSubstr("\"outcome\":\"ok\"}\n"));
  EXPECT_THAT(lines, ::testing::HasSubstr("\"outcome\":\"error: bad \\\"level\\\"\"}\n"));
  EXPECT_THAT(lines, ::testing::HasSubstr("\"outcome\":\"error: HTTP 500\"}\n"));
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 4);
  EXPECT_THAT(lines, ::testing::Not(::testing::HasSubstr("t0ken")));
  EXPECT_THAT(lines, ::testing::Not(::testing::HasSubstr("wrong")));
}

// Triton's protocol categories of the routes (http_restricted_api_test.py's groups).
TEST(AdminAccessTest, ProtocolCategoriesOfTheRoutes) {
  using C = ApiCategory;
  const std::pair<const char*, std::optional<C>> cases[] = {
      {"/v2", C::kMetadata},
      {"/v2/health/live", C::kHealth},
      {"/v2/health/ready", C::kHealth},
      {"/v2/models/m/ready", C::kHealth},
      {"/v2/models/m/versions/2/ready", C::kHealth},
      {"/v2/models/m", C::kMetadata},
      {"/v2/models/m/versions/2", C::kMetadata},
      {"/v2/models/m/config", C::kModelConfig},
      {"/v2/models/stats", C::kStatistics},
      {"/v2/models/m/stats", C::kStatistics},
      {"/v2/models/m/versions/1/diagnosis", C::kStatistics},
      {"/v2/models/m/infer", C::kInference},
      {"/v2/models/m/versions/1/generate_stream", C::kInference},
      {"//v2//models/m/infer", C::kInference},  // empty segments ignored, as the routes do
      {"/v1/chat/completions", C::kInference},
      {"/v1/models", C::kMetadata},
      {"/v2/models/m/trace/setting", std::nullopt},  // the trace category, its handler's
      {"/v2/repository/index", std::nullopt},
      {"/v2/logging", std::nullopt},
      {"/v2/systemsharedmemory/status", std::nullopt},
      {"/metrics", std::nullopt},
      {"/", std::nullopt},
  };
  for (const auto& [path, expected] : cases) EXPECT_EQ(HttpProtocolCategory(path), expected) << path;

  AdminGuard::Options options;
  options.restrictions.push_back(*ParseApiRestriction("inference,metadata:infer-key=v"));
  const AdminGuard guard = *AdminGuard::Create(options);
  HttpRequest infer{"POST", "/v2/models/m/infer", {}, "", {}, ""};
  absl::Status refused = CheckHttpProtocolRestriction(guard, infer);
  EXPECT_EQ(ErrorResponse(refused).status, 403);
  EXPECT_EQ(refused.message(), "This API is restricted, expecting header 'infer-key'");
  infer.headers = {{"infer-key", "v"}};
  EXPECT_TRUE(CheckHttpProtocolRestriction(guard, infer).ok());
  HttpRequest stats{"GET", "/v2/models/m/stats", {}, "", {}, ""};
  EXPECT_TRUE(CheckHttpProtocolRestriction(guard, stats).ok());  // not in a group
}

}  // namespace
}  // namespace infera
