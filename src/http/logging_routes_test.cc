#include "http/logging_routes.h"

#include "common/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

HttpRequest Post(std::string body) { return HttpRequest{"POST", "/v2/logging", {}, std::move(body), {}}; }

TEST(LoggingRoutesTest, GetReportsAndPostChangesSettings) {
  SetLogLevel(LogLevel::kInfo);
  SetLogFormat(LogFormat::kText);
  HttpResponse current = HandleLoggingRequest(HttpRequest{"GET", "/v2/logging", {}, "", {}});
  EXPECT_EQ(current.status, 200);
  EXPECT_THAT(current.body, HasSubstr(R"("log_verbose_level":0)"));
  HttpResponse changed = HandleLoggingRequest(Post(R"({"log_verbose_level":1,"log_format":"json"})"));
  EXPECT_EQ(changed.status, 200);
  EXPECT_THAT(changed.body, HasSubstr(R"("log_verbose_level":1)"));
  EXPECT_EQ(GetLogLevel(), LogLevel::kVerbose);
  EXPECT_EQ(GetLogFormat(), LogFormat::kJson);
  EXPECT_EQ(HandleLoggingRequest(Post(R"({"log_info":false})")).status, 200);
  EXPECT_EQ(GetLogLevel(), LogLevel::kWarning);
  SetLogLevel(LogLevel::kInfo);
  SetLogFormat(LogFormat::kText);
}

TEST(LoggingRoutesTest, BadInputIsA400NamingTheProblem) {
  EXPECT_THAT(HandleLoggingRequest(Post("{oops")).body, HasSubstr("invalid JSON"));
  // Issue 13 finding 1: this nesting overflowed the recursive parser's stack.
  const HttpResponse deep =
      HandleLoggingRequest(Post(R"({"log_info":)" + std::string(250000, '[') + std::string(250000, ']') + "}"));
  EXPECT_EQ(deep.status, 400);
  EXPECT_THAT(deep.body, HasSubstr("100 levels"));
  EXPECT_THAT(HandleLoggingRequest(Post(R"({"log_colour":true})")).body, HasSubstr("log_colour"));
  EXPECT_THAT(HandleLoggingRequest(Post(R"({"log_info":"yes"})")).body, HasSubstr("log_info"));
  EXPECT_THAT(HandleLoggingRequest(Post(R"({"log_error":false})")).body, HasSubstr("cannot be turned off"));
  EXPECT_THAT(HandleLoggingRequest(Post(R"({"log_file":"/tmp/x"})")).body, HasSubstr("stderr"));
  EXPECT_EQ(HandleLoggingRequest(Post("[1]")).status, 400);
  EXPECT_EQ(HandleLoggingRequest(HttpRequest{"DELETE", "/v2/logging", {}, "", {}}).status, 405);
  EXPECT_EQ(GetLogLevel(), LogLevel::kInfo);  // nothing half-applied
}

}  // namespace
}  // namespace infera
