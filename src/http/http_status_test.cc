#include "http/http_status.h"

#include "common/retry_after.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(HttpStatusTest, MapsEveryCodeOnce) {
  EXPECT_EQ(HttpStatusCode(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusCode(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusCode(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusCode(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusCode(absl::StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusCode(absl::StatusCode::kUnimplemented), 501);
}

TEST(HttpStatusTest, ErrorBodyIsEscapedJsonAndRetryableOnesSayWhen) {
  HttpResponse r = ErrorResponse(absl::ResourceExhaustedError("queue \"full\"\n"));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.body, R"({"error":"queue \"full\"\n"})");
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "Retry-After");
  EXPECT_TRUE(ErrorResponse(400, "x").headers.empty());
}

// Issue 13 finding 11: invalid UTF-8 from the URL was echoed raw (the body was not JSON).
TEST(HttpStatusTest, InvalidUtf8InTheMessageBecomesReplacementCharacters) {
  HttpResponse r = ErrorResponse(absl::NotFoundError("model 'a\xff\xfe\xc3' not found"));
  EXPECT_EQ(r.body, "{\"error\":\"model 'a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd' not found\"}");
  EXPECT_EQ(ErrorJson("caf\xc3\xa9"), "{\"error\":\"caf\xc3\xa9\"}");
}

TEST(HttpStatusTest, RetryHintBecomesTheRetryAfterHeader) {
  HttpResponse r = ErrorResponse(WithRetryAfter(absl::ResourceExhaustedError("full"), 7));
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].second, "7");
  EXPECT_EQ(*RetryAfterSeconds(WithRetryAfter(absl::UnavailableError("x"), 99999)), 3600);
}

}  // namespace
}  // namespace infera
