#include "security/token_bucket.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, BurstThenRefillAtRate) {
  FakeClock clock;
  TokenBucket bucket(/*rate=*/2, /*burst=*/2, &clock);
  EXPECT_EQ(bucket.TryTake(1), Nanos(0));
  EXPECT_EQ(bucket.TryTake(1), Nanos(0));
  EXPECT_EQ(bucket.TryTake(1), milliseconds(500));  // one token at 2/s
  clock.Advance(milliseconds(499));
  EXPECT_GT(bucket.TryTake(1), Nanos(0));
  clock.Advance(milliseconds(1));
  EXPECT_EQ(bucket.TryTake(1), Nanos(0));
  clock.Advance(std::chrono::seconds(100));  // capped at the burst
  EXPECT_EQ(bucket.TryTake(1), Nanos(0));
  EXPECT_EQ(bucket.TryTake(1), Nanos(0));
  EXPECT_GT(bucket.TryTake(1), Nanos(0));
}

TEST(TokenBucketTest, BurstIsAtLeastOne) {
  FakeClock clock;
  TokenBucket bucket(0.5, 0.5, &clock);
  EXPECT_EQ(bucket.burst(), 1);
  EXPECT_EQ(bucket.TryTake(1), Nanos(0));
  EXPECT_EQ(bucket.TryTake(1), std::chrono::seconds(2));
}

TEST(TokenBucketTest, ChargeMayGoNegativeAndBlocksUntilRefilled) {
  FakeClock clock;
  TokenBucket bucket(/*rate=*/10, /*burst=*/100, &clock);  // 600 tokens/min
  EXPECT_EQ(bucket.TimeUntilPositive(), Nanos(0));
  bucket.Charge(150);  // level -50
  const Nanos wait = bucket.TimeUntilPositive();
  EXPECT_GT(wait, std::chrono::seconds(5) - Nanos(1));
  EXPECT_LT(wait, std::chrono::seconds(5) + milliseconds(1));
  clock.Advance(std::chrono::seconds(5));
  EXPECT_GT(bucket.TimeUntilPositive(), Nanos(0));  // exactly zero is still empty
  clock.Advance(milliseconds(1));
  EXPECT_EQ(bucket.TimeUntilPositive(), Nanos(0));
}

}  // namespace
}  // namespace infera
