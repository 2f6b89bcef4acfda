#include "grpc/grpc_status.h"

#include "common/retry_after.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(GrpcStatusTest, MapsTheCodesTheCoreProduces) {
  EXPECT_EQ(GrpcStatusCode(absl::StatusCode::kInvalidArgument), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GrpcStatusCode(absl::StatusCode::kNotFound), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GrpcStatusCode(absl::StatusCode::kResourceExhausted),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(GrpcStatusCode(absl::StatusCode::kUnavailable), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(GrpcStatusCode(absl::StatusCode::kCancelled), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(GrpcStatusCode(absl::StatusCode::kInternal), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(GrpcStatusCode(absl::StatusCode::kFailedPrecondition),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(GrpcStatusCode(absl::StatusCode::kDeadlineExceeded),
            grpc::StatusCode::DEADLINE_EXCEEDED);
}

TEST(GrpcStatusTest, EveryCanonicalCodeKeepsItsNumber) {
  // absl's codes are gRPC's; the switch must not shuffle any of them.
  for (int code = 0; code <= 16; ++code) {
    EXPECT_EQ(static_cast<int>(GrpcStatusCode(static_cast<absl::StatusCode>(code))), code);
  }
  EXPECT_EQ(GrpcStatusCode(static_cast<absl::StatusCode>(99)), grpc::StatusCode::UNKNOWN);
}

TEST(GrpcStatusTest, KeepsTheMessage) {
  grpc::Status status = ToGrpcStatus(absl::ResourceExhaustedError("queue is full (8 waiting)"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(), "queue is full (8 waiting)");
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
}

TEST(GrpcStatusTest, ARetryAfterHintIsInTheMessage) {
  grpc::Status status =
      ToGrpcStatus(WithRetryAfter(absl::ResourceExhaustedError("API key quota exceeded: requests per second"), 3));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(), "API key quota exceeded: requests per second (retry after 3 s)");
}

}  // namespace
}  // namespace infera
