#include "http/response_budget.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

constexpr int64_t kMiB = 1 << 20;

TEST(ResponseBudgetTest, AdmitsWithinTheLimitAndReleases) {
  ResponseBudget budget(10 * kMiB);
  EXPECT_TRUE(budget.TryReserve(4 * kMiB));
  EXPECT_TRUE(budget.TryReserve(6 * kMiB));  // exactly the limit
  EXPECT_EQ(budget.buffered(), 10 * kMiB);
  EXPECT_FALSE(budget.TryReserve(kMiB));
  EXPECT_EQ(budget.buffered(), 10 * kMiB);  // a refusal adds nothing
  budget.Release(6 * kMiB);
  EXPECT_TRUE(budget.TryReserve(kMiB));
  budget.Release(5 * kMiB);
  EXPECT_EQ(budget.buffered(), 0);
}

TEST(ResponseBudgetTest, OneAnswerAlwaysFitsAndSmallOnesAlwaysPass) {
  ResponseBudget budget(kMiB);
  EXPECT_TRUE(budget.TryReserve(100 * kMiB));  // alone: admitted though over the limit
  EXPECT_FALSE(budget.TryReserve(ResponseBudget::kAlwaysAdmittedBytes + 1));
  EXPECT_TRUE(budget.TryReserve(ResponseBudget::kAlwaysAdmittedBytes));  // health checks, errors
  EXPECT_EQ(budget.buffered(), 100 * kMiB + ResponseBudget::kAlwaysAdmittedBytes);
}

TEST(ResponseBudgetTest, StreamBytesAreCountedWithoutAdmission) {
  ResponseBudget budget(kMiB);
  budget.Add(2 * kMiB);
  EXPECT_EQ(budget.buffered(), 2 * kMiB);
  EXPECT_FALSE(budget.TryReserve(kMiB));
  budget.Release(2 * kMiB);
  EXPECT_TRUE(budget.TryReserve(kMiB));
  budget.CountRejected();
  budget.CountWriteTimeout();
  budget.CountWriteTimeout();
  EXPECT_EQ(budget.rejected(), 1u);
  EXPECT_EQ(budget.write_timeouts(), 2u);
}

}  // namespace
}  // namespace infera
