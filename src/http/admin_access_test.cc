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

}  // namespace
}  // namespace infera
