#include "scheduling/request_queue.h"

#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduling/scheduling_test_util.h"

namespace infera {
namespace {

using ::infera::testing::MakeRequest;
using ::testing::ElementsAre;

SchedulingOptions Options(int levels, QueuePolicy policy = {}) {
  SchedulingOptions options;
  options.model_name = "m";
  options.batching = true;
  options.max_batch_rows = 8;
  options.policies.assign(levels, policy);
  options.default_priority_level = levels;  // lowest by default
  return options;
}

std::unique_ptr<ScheduledRequest> Req(const std::string& id, int64_t rows = 1, int64_t width = 2,
                                      Parameters params = {}) {
  return MakeRequest(id, rows, [](absl::StatusOr<InferResponse>, ResponseDelivery) {}, width, std::move(params));
}

std::vector<std::string> Ids(const std::vector<const ScheduledRequest*>& requests) {
  std::vector<std::string> ids;
  for (const auto* r : requests) ids.push_back(r->request.id);
  return ids;
}
std::vector<std::string> Ids(const ScheduledRequests& requests) {
  std::vector<std::string> ids;
  for (const auto& r : requests) ids.push_back(r->request.id);
  return ids;
}

TEST(RequestQueueTest, HigherPriorityLevelsComeFirstFifoWithin) {
  FakeClock clock;
  RequestQueue queue(Options(2));
  EXPECT_FALSE(queue.Push(Req("low1"), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("high1", 1, 2, {{"priority", int64_t{1}}}), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("low2", 1, 2, {{"priority", int64_t{0}}}), clock.Now()));  // 0: default
  EXPECT_FALSE(queue.Push(Req("high2", 1, 2, {{"priority", int64_t{1}}}), clock.Now()));
  EXPECT_EQ(queue.size(), 4u);
  EXPECT_THAT(Ids(queue.Candidates(8)), ElementsAre("high1", "high2", "low1", "low2"));
  EXPECT_THAT(Ids(queue.Candidates(0)), ElementsAre("high1"));  // no batching: the head only
}

TEST(RequestQueueTest, RejectsBadPriorityAndFullLevels) {
  FakeClock clock;
  QueuePolicy small;
  small.max_queue_size = 2;
  RequestQueue queue(Options(2, small));
  auto bad = queue.Push(Req("p9", 1, 2, {{"priority", int64_t{9}}}), clock.Now());
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad->request->request.id, "p9");  // handed back, not lost
  EXPECT_FALSE(queue.Push(Req("a"), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("b"), clock.Now()));
  auto full = queue.Push(Req("c"), clock.Now());
  ASSERT_TRUE(full);
  EXPECT_EQ(full->status.code(), absl::StatusCode::kResourceExhausted);
  // The other level has its own bound.
  EXPECT_FALSE(queue.Push(Req("d", 1, 2, {{"priority", int64_t{1}}}), clock.Now()));
}

TEST(RequestQueueTest, TimeoutRejectHandsExpiredRequestsBack) {
  FakeClock clock;
  QueuePolicy policy;
  policy.default_timeout = std::chrono::microseconds(1000);
  RequestQueue queue(Options(1, policy));
  EXPECT_FALSE(queue.Push(Req("a"), clock.Now()));
  clock.Advance(std::chrono::microseconds(500));
  EXPECT_FALSE(queue.Push(Req("b"), clock.Now()));
  EXPECT_EQ(*queue.EarliestDeadline(), clock.Now() + std::chrono::microseconds(500));
  EXPECT_TRUE(queue.Sweep(clock.Now()).empty());
  clock.Advance(std::chrono::microseconds(600));
  auto expired = queue.Sweep(clock.Now());
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].request->request.id, "a");
  EXPECT_EQ(expired[0].status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(Ids(queue.Candidates(8)), ElementsAre("b"));
}

TEST(RequestQueueTest, TimeoutDelayMovesBehindLiveRequestsOfItsLevelOnly) {
  FakeClock clock;
  QueuePolicy delay;
  delay.default_timeout = std::chrono::microseconds(100);
  delay.timeout_action = QueuePolicy::TimeoutAction::kDelay;
  SchedulingOptions options = Options(2, delay);
  options.policies[1].default_timeout = std::chrono::microseconds(0);
  RequestQueue queue(options);
  EXPECT_FALSE(queue.Push(Req("old", 1, 2, {{"priority", int64_t{1}}}), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("level2"), clock.Now()));
  clock.Advance(std::chrono::microseconds(200));
  EXPECT_FALSE(queue.Push(Req("new", 1, 2, {{"priority", int64_t{1}}}), clock.Now()));
  EXPECT_TRUE(queue.Sweep(clock.Now()).empty());  // delayed, not rejected
  EXPECT_THAT(Ids(queue.Candidates(8)), ElementsAre("new", "old", "level2"));
}

TEST(RequestQueueTest, TimeoutOverrideOnlyWhereAllowedAndOnlyShorter) {
  FakeClock clock;
  QueuePolicy policy;
  policy.default_timeout = std::chrono::microseconds(1000);
  policy.allow_timeout_override = true;
  RequestQueue queue(Options(1, policy));
  EXPECT_FALSE(queue.Push(Req("short", 1, 2, {{"timeout", int64_t{10}}}), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("long", 1, 2, {{"timeout", int64_t{5000}}}), clock.Now()));
  clock.Advance(std::chrono::microseconds(20));
  auto expired = queue.Sweep(clock.Now());
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].request->request.id, "short");
  clock.Advance(std::chrono::microseconds(1000));
  expired = queue.Sweep(clock.Now());  // "long" capped at the default 1000 µs
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].request->request.id, "long");

  QueuePolicy no_override;
  RequestQueue strict(Options(1, no_override));
  EXPECT_FALSE(strict.Push(Req("ignored", 1, 2, {{"timeout", int64_t{1}}}), clock.Now()));
  clock.Advance(std::chrono::seconds(10));
  EXPECT_TRUE(strict.Sweep(clock.Now()).empty());
  auto negative = strict.Push(Req("neg", 1, 2, {{"timeout", int64_t{-5}}}), clock.Now());
  ASSERT_TRUE(negative);
  EXPECT_EQ(negative->status.code(), absl::StatusCode::kInvalidArgument);
}

TEST(RequestQueueTest, TimeoutPastOneDayIsABadRequestNotAnInstantTimeout) {
  // 9.2e15 µs used to overflow the deadline (now + timeout in ns) and expire at once.
  FakeClock clock;
  clock.Advance(std::chrono::hours(1));
  QueuePolicy policy;
  policy.allow_timeout_override = true;
  RequestQueue queue(Options(1, policy));
  for (int64_t huge : {int64_t{9223372036854775}, INT64_MAX, int64_t{86400000001}}) {
    auto rejected = queue.Push(Req("huge", 1, 2, {{"timeout", huge}}), clock.Now());
    ASSERT_TRUE(rejected) << huge;
    EXPECT_EQ(rejected->status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(rejected->status.message()), ::testing::HasSubstr("'timeout'"));
    EXPECT_THAT(std::string(rejected->status.message()), ::testing::HasSubstr("86400000000"));
  }
  EXPECT_FALSE(queue.Push(Req("day", 1, 2, {{"timeout", int64_t{86400000000}}}), clock.Now()));
  clock.Advance(std::chrono::hours(23));
  EXPECT_TRUE(queue.Sweep(clock.Now()).empty());
  clock.Advance(std::chrono::hours(1));
  ASSERT_EQ(queue.Sweep(clock.Now()).size(), 1u);
}

// Issue 26 finding 9: a timeout or priority of another type (a string, 1e300 — a
// double —, a fraction, a bool) used to be ignored: the request ran without the
// deadline or level it asked for. Now it is refused naming the parameter.
TEST(RequestQueueTest, ParametersOfTheWrongTypeAreRefusedNamingThem) {
  FakeClock clock;
  QueuePolicy policy;
  policy.allow_timeout_override = true;
  RequestQueue queue(Options(2, policy));
  const std::vector<std::tuple<std::string, ParameterValue, std::string>> cases = {
      {"timeout", std::string("100"), "parameter 'timeout' must be an integer (microseconds), not a string"},
      {"timeout", 1e300, "parameter 'timeout' must be an integer (microseconds), not a number that is not an integer"},
      {"timeout", 1.5, "'timeout'"},
      {"timeout", -1e300, "'timeout'"},
      {"timeout", true, "parameter 'timeout' must be an integer (microseconds), not a bool"},
      {"priority", std::string("1"), "parameter 'priority' must be an integer, not a string"},
      {"priority", 1.0, "'priority'"},
      {"priority", false, "'priority'"},
  };
  for (const auto& [key, value, needle] : cases) {
    auto request = Req("typed", 1, 2, {{key, value}});
    EXPECT_EQ(queue.CheckParameters(*request).code(), absl::StatusCode::kInvalidArgument) << key;
    auto rejected = queue.Push(std::move(request), clock.Now());
    ASSERT_TRUE(rejected) << key;
    EXPECT_EQ(rejected->status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(rejected->status.message()), ::testing::HasSubstr(needle));
  }
  EXPECT_EQ(queue.size(), 0u);
  // Integers still pass, and other parameters are not the queue's business.
  EXPECT_FALSE(queue.Push(Req("int", 1, 2, {{"timeout", int64_t{100}}, {"priority", int64_t{1}},
                                            {"custom", std::string("x")}}),
                          clock.Now()));
}

TEST(RequestQueueTest, DeadlineSaturatesInsteadOfWrapping) {
  // A policy timeout built without the config bounds still never wraps to the past.
  FakeClock clock;
  clock.Advance(std::chrono::hours(1));
  QueuePolicy policy;
  policy.default_timeout = std::chrono::microseconds(INT64_MAX);
  RequestQueue queue(Options(1, policy));
  EXPECT_FALSE(queue.Push(Req("forever"), clock.Now()));
  clock.Advance(std::chrono::hours(24 * 365));
  EXPECT_TRUE(queue.Sweep(clock.Now()).empty());
  EXPECT_EQ(queue.size(), 1u);
}

TEST(RequestQueueTest, CancelledRequestsAreSweptOut) {
  FakeClock clock;
  RequestQueue queue(Options(1));
  auto token = std::make_shared<CancellationToken>();
  auto request = Req("gone");
  request->request.cancellation = token;
  EXPECT_FALSE(queue.Push(std::move(request), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("stays"), clock.Now()));
  token->Cancel();
  auto swept = queue.Sweep(clock.Now());
  ASSERT_EQ(swept.size(), 1u);
  EXPECT_EQ(swept[0].status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(queue.size(), 1u);
}

TEST(RequestQueueTest, CandidatesShareShapesAndFitMaxRows) {
  FakeClock clock;
  RequestQueue queue(Options(1));
  EXPECT_FALSE(queue.Push(Req("a", 3), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("wide", 1, 5), clock.Now()));  // other shape: skipped
  EXPECT_FALSE(queue.Push(Req("b", 4), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("c", 2), clock.Now()));        // 3+4+2 > 8: skipped
  EXPECT_FALSE(queue.Push(Req("d", 1), clock.Now()));
  auto candidates = queue.Candidates(8);
  EXPECT_THAT(Ids(candidates), ElementsAre("a", "b", "d"));
  candidates.resize(2);
  EXPECT_THAT(Ids(queue.Take(candidates)), ElementsAre("a", "b"));
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_THAT(Ids(queue.Candidates(8)), ElementsAre("wide"));  // keeps its place
  EXPECT_THAT(Ids(queue.TakeAll()), ElementsAre("wide", "c", "d"));
  EXPECT_TRUE(queue.empty());
}

TEST(RequestQueueTest, RowsCountEveryQueuedRequestThroughPushSweepTakeAndTakeAll) {
  FakeClock clock;
  RequestQueue queue(Options(1));
  auto token = std::make_shared<CancellationToken>();
  auto gone = Req("gone", 2);
  gone->request.cancellation = token;
  RequestQueue::Admitted admitted{clock.Now(), false};
  EXPECT_FALSE(queue.Push(std::move(gone), clock.Now(), &admitted));
  EXPECT_FALSE(admitted.deadline);  // no timeout: no queue deadline
  EXPECT_TRUE(admitted.head);
  EXPECT_FALSE(queue.Push(Req("a", 3), clock.Now()));
  EXPECT_FALSE(queue.Push(Req("wide", 1, 5), clock.Now()));  // other shapes count too
  EXPECT_FALSE(queue.Push(Req("b", 1), clock.Now()));
  EXPECT_EQ(queue.rows(), 7);
  token->Cancel();
  EXPECT_EQ(queue.Sweep(clock.Now()).size(), 1u);
  EXPECT_EQ(queue.rows(), 5);
  EXPECT_THAT(Ids(queue.Take(queue.Candidates(8))), ElementsAre("a", "b"));
  EXPECT_EQ(queue.rows(), 1);
  EXPECT_EQ(queue.TakeAll().size(), 1u);
  EXPECT_EQ(queue.rows(), 0);
}

TEST(RequestQueueTest, PushReportsTheAdmittedRequestsDeadlineAndWhetherItIsTheHead) {
  FakeClock clock;
  QueuePolicy policy;
  policy.allow_timeout_override = true;
  RequestQueue queue(Options(2, policy));  // levels 1 and 2 (the default)
  RequestQueue::Admitted admitted;
  EXPECT_FALSE(queue.Push(Req("a", 1, 2, {{"timeout", int64_t{250}}}), clock.Now(), &admitted));
  ASSERT_TRUE(admitted.deadline);
  EXPECT_EQ(*admitted.deadline, clock.Now() + std::chrono::microseconds(250));
  EXPECT_TRUE(admitted.head);
  EXPECT_FALSE(queue.Push(Req("b"), clock.Now(), &admitted));
  EXPECT_FALSE(admitted.head);  // behind "a"
  EXPECT_FALSE(queue.Push(Req("urgent", 1, 2, {{"priority", int64_t{1}}}), clock.Now(), &admitted));
  EXPECT_TRUE(admitted.head);  // a higher level: ahead of everything
  EXPECT_FALSE(queue.Push(Req("urgent2", 1, 2, {{"priority", int64_t{1}}}), clock.Now(), &admitted));
  EXPECT_FALSE(admitted.head);
}

// Queue accounting is checked in every build (INFERA_CHECK): taking a request the
// queue does not hold (a stale Candidates() pointer) aborts instead of leaving size()
// out of step with the queue.
TEST(RequestQueueDeathTest, TakingARequestNotInTheQueueAborts) {
  FakeClock clock;
  RequestQueue queue(Options(1));
  EXPECT_FALSE(queue.Push(Req("a"), clock.Now()));
  auto stale = Req("not-queued");
  EXPECT_DEATH(queue.Take({stale.get()}), "CHECK failed: .*not in the queue");
}

}  // namespace
}  // namespace infera
