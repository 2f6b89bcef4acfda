#include "http/admin_access.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(AdminAccessTest, ReadsHeadersAndAnswers401WithChallengeOr403) {
  AdminGuard::Options options;
  options.admin_token = "t";
  options.restrictions.push_back(*ParseApiRestriction("logging:x-admin=1"));
  const AdminGuard guard = *AdminGuard::Create(options);
  HttpRequest request{"POST", "/v2/logging", {{"authorization", "Bearer t"}}, "", {}};
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

}  // namespace
}  // namespace infera
