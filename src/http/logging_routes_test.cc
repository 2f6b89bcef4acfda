#include "http/logging_routes.h"

#include "common/log_switches.h"
#include "common/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

HttpRequest Post(std::string body) { return HttpRequest{"POST", "/v2/logging", {}, std::move(body), {}, ""}; }

// No token, no restriction, --allow-admin-api=logging: open to every client.
const AdminGuard& Open() {
  static const AdminGuard guard = [] {
    AdminGuard::Options options;
    options.opened = {ApiCategory::kLogging};
    return *AdminGuard::Create(std::move(options));
  }();
  return guard;
}

// The default server: reading and changing the settings are closed (issue 26: anyone
// could turn error logs off or flood the log), naming how to open them.
TEST(LoggingRoutesTest, ClosedByDefault) {
  const AdminGuard closed = *AdminGuard::Create({});
  const LogLevel before = GetLogLevel();
  for (const char* method : {"GET", "POST"}) {
    HttpResponse response =
        HandleLoggingRequest(HttpRequest{method, "/v2/logging", {}, R"({"log_verbose_level":1})", {}, ""}, closed);
    EXPECT_EQ(response.status, 403) << method;
    EXPECT_THAT(response.body, HasSubstr("--allow-admin-api=logging"));
  }
  EXPECT_EQ(GetLogLevel(), before);
}

TEST(LoggingRoutesTest, GetReportsAndPostChangesSettings) {
  SetLogLevel(LogLevel::kInfo);
  SetLogFormat(LogFormat::kText);
  HttpResponse current = HandleLoggingRequest(HttpRequest{"GET", "/v2/logging", {}, "", {}, ""}, Open());
  EXPECT_EQ(current.status, 200);
  EXPECT_THAT(current.body, HasSubstr(R"("log_verbose_level":0)"));
  HttpResponse changed = HandleLoggingRequest(Post(R"({"log_verbose_level":1,"log_format":"json"})"), Open());
  EXPECT_EQ(changed.status, 200);
  EXPECT_THAT(changed.body, HasSubstr(R"("log_verbose_level":1)"));
  EXPECT_EQ(GetLogLevel(), LogLevel::kVerbose);
  EXPECT_EQ(GetLogFormat(), LogFormat::kJson);
  EXPECT_EQ(HandleLoggingRequest(Post(R"({"log_info":false})"), Open()).status, 200);
  EXPECT_FALSE(SeverityEnabled(LogLevel::kInfo));  // Triton's switch, independent of the level
  EXPECT_EQ(HandleLoggingRequest(Post(R"({"log_error":false})"), Open()).status, 200);  // Triton allows it
  EXPECT_FALSE(SeverityEnabled(LogLevel::kError));
  EXPECT_EQ(HandleLoggingRequest(Post(R"({"log_info":true,"log_error":true,"log_verbose_level":0})"), Open()).status,
            200);
  EXPECT_TRUE(SeverityEnabled(LogLevel::kInfo));
  EXPECT_TRUE(SeverityEnabled(LogLevel::kError));
  SetLogLevel(LogLevel::kInfo);
  SetLogFormat(LogFormat::kText);
}

TEST(LoggingRoutesTest, BadInputIsA400NamingTheProblem) {
  EXPECT_THAT(HandleLoggingRequest(Post("{oops"), Open()).body, HasSubstr("invalid JSON"));
  // Issue 13 finding 1: this nesting overflowed the recursive parser's stack.
  const HttpResponse deep =
      HandleLoggingRequest(Post(R"({"log_info":)" + std::string(250000, '[') + std::string(250000, ']') + "}"), Open());
  EXPECT_EQ(deep.status, 400);
  EXPECT_THAT(deep.body, HasSubstr("100 levels"));
  EXPECT_THAT(HandleLoggingRequest(Post(R"({"log_colour":true})"), Open()).body, HasSubstr("log_colour"));
  EXPECT_THAT(HandleLoggingRequest(Post(R"({"log_info":"yes"})"), Open()).body, HasSubstr("log_info"));
  EXPECT_THAT(HandleLoggingRequest(Post(R"({"log_error":"no"})"), Open()).body, HasSubstr("log_error must be true or false"));
  EXPECT_THAT(HandleLoggingRequest(Post(R"({"log_file":"/tmp/x"})"), Open()).body, HasSubstr("stderr"));
  EXPECT_EQ(HandleLoggingRequest(Post("[1]"), Open()).status, 400);
  EXPECT_EQ(HandleLoggingRequest(HttpRequest{"DELETE", "/v2/logging", {}, "", {}, ""}, Open()).status, 405);
  EXPECT_EQ(GetLogLevel(), LogLevel::kInfo);  // nothing half-applied
}

TEST(LoggingRoutesTest, AdminTokenGuardsReadAndWrite) {
  // /v2/logging used to be open even with --admin-token set.
  AdminGuard::Options options;
  options.admin_token = "s3cret";
  const AdminGuard guard = *AdminGuard::Create(options);
  for (const char* method : {"GET", "POST"}) {
    HttpRequest request{method, "/v2/logging", {}, method == std::string("POST") ? "{}" : "", {}, ""};
    HttpResponse none = HandleLoggingRequest(request, guard);
    EXPECT_EQ(none.status, 401) << method;
    EXPECT_THAT(none.body, HasSubstr("Authorization: Bearer"));
    request.headers = {{"authorization", "Bearer wrong"}};
    EXPECT_EQ(HandleLoggingRequest(request, guard).status, 401) << method;
    request.headers = {{"authorization", "Bearer s3cret"}};
    EXPECT_EQ(HandleLoggingRequest(request, guard).status, 200) << method;
  }
}

TEST(LoggingRoutesTest, RestrictedApiHeaderGuardsTheRoute) {
  AdminGuard::Options options;
  options.restrictions.push_back(*ParseApiRestriction("logging:admin-key=k1"));
  const AdminGuard guard = *AdminGuard::Create(options);
  HttpRequest request{"GET", "/v2/logging", {}, "", {}, ""};
  HttpResponse none = HandleLoggingRequest(request, guard);
  EXPECT_EQ(none.status, 403);
  EXPECT_THAT(none.body, HasSubstr("expecting header 'admin-key'"));
  request.headers = {{"admin-key", "k2"}};
  EXPECT_EQ(HandleLoggingRequest(request, guard).status, 403);
  request.headers = {{"admin-key", "k1"}};
  EXPECT_EQ(HandleLoggingRequest(request, guard).status, 200);
}

}  // namespace
}  // namespace infera
