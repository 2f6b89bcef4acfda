#include "scheduling/ordered_completion.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduling/scheduling_test_util.h"

namespace infera {
namespace {

TEST(OrderedCompletionTest, DeliversInWrapOrderWhateverTheCompletionOrder) {
  testing::Outcomes outcomes;
  OrderedCompletion ordered;
  std::vector<InferCallback> wrapped;
  for (int i = 0; i < 5; ++i) wrapped.push_back(ordered.Wrap(outcomes.Callback(std::to_string(i))));
  wrapped[3](InferResponse{}, ResponseDelivery{});
  wrapped[1](absl::InternalError("x"), ResponseDelivery{});
  EXPECT_EQ(outcomes.size(), 0u);  // 0 not done: nothing may go out
  wrapped[0](InferResponse{}, ResponseDelivery{});
  EXPECT_THAT(outcomes.order(), ::testing::ElementsAre("0", "1"));
  wrapped[4](InferResponse{}, ResponseDelivery{});
  wrapped[2](InferResponse{}, ResponseDelivery{});
  EXPECT_THAT(outcomes.order(), ::testing::ElementsAre("0", "1", "2", "3", "4"));
  EXPECT_EQ(outcomes.status_of("1").code(), absl::StatusCode::kInternal);
}

TEST(OrderedCompletionTest, ConcurrentCompletionsStayOrdered) {
  testing::Outcomes outcomes;
  OrderedCompletion ordered;
  constexpr int kCount = 400;
  std::vector<InferCallback> wrapped;
  for (int i = 0; i < kCount; ++i) wrapped.push_back(ordered.Wrap(outcomes.Callback(std::to_string(i))));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = kCount - 1 - t; i >= 0; i -= 4) wrapped[i](InferResponse{}, ResponseDelivery{});
    });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> expected;
  for (int i = 0; i < kCount; ++i) expected.push_back(std::to_string(i));
  EXPECT_EQ(outcomes.order(), expected);
}

}  // namespace
}  // namespace infera
