#include "scheduling/instance_pool.h"

#include <atomic>
#include <set>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

// An instance that only carries an id; the runner does the "work".
class FakeInstance : public ModelInstance {
 public:
  explicit FakeInstance(int id) : id(id) {}
  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor>) override {
    return std::vector<Tensor>{};
  }
  const int id;
};

std::vector<std::unique_ptr<ModelInstance>> MakeInstances(int n) {
  std::vector<std::unique_ptr<ModelInstance>> instances;
  for (int i = 0; i < n; ++i) instances.push_back(std::make_unique<FakeInstance>(i));
  return instances;
}

// Builds a request whose callback stores its outcome in `*status` and counts down.
std::unique_ptr<ScheduledRequest> MakeRequest(std::string id, absl::Status* status,
                                              absl::BlockingCounter* done) {
  auto request = std::make_unique<ScheduledRequest>();
  request->request.id = std::move(id);
  request->callback = [status, done](absl::StatusOr<InferResponse> response) {
    *status = response.status();
    done->DecrementCount();
  };
  return request;
}

// Completes every request with an empty response and records who ran it.
BatchRunner RecordingRunner(absl::Mutex* mu, std::vector<std::string>* order,
                            std::set<int>* instances_used) {
  return [=](ModelInstance& instance, ScheduledRequests requests) {
    for (auto& request : requests) {
      {
        absl::MutexLock lock(mu);
        order->push_back(request->request.id);
        instances_used->insert(static_cast<FakeInstance&>(instance).id);
      }
      request->callback(InferResponse{});
    }
  };
}

TEST(InstancePoolTest, RunsEveryRequestExactlyOnceInFifoOrder) {
  absl::Mutex mu;
  std::vector<std::string> order;
  std::set<int> used;
  constexpr int kRequests = 100;
  std::vector<absl::Status> statuses(kRequests, absl::UnknownError("not run"));
  absl::BlockingCounter done(kRequests);
  {
    InstancePool pool({"m", 1000}, MakeInstances(1), RecordingRunner(&mu, &order, &used));
    for (int i = 0; i < kRequests; ++i) {
      pool.Enqueue(MakeRequest(std::to_string(i), &statuses[i], &done));
    }
    done.Wait();
  }
  ASSERT_EQ(order.size(), static_cast<size_t>(kRequests));
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(order[i], std::to_string(i));  // one instance: strict FIFO
    EXPECT_TRUE(statuses[i].ok());
  }
}

TEST(InstancePoolTest, InstancesRunConcurrently) {
  // Two requests block inside the runner until both are running: only possible if
  // two instances execute at the same time.
  absl::BlockingCounter both_running(2);
  absl::Notification release;
  std::set<int> ids;
  absl::Mutex mu;
  BatchRunner runner = [&](ModelInstance& instance, ScheduledRequests requests) {
    {
      absl::MutexLock lock(&mu);
      ids.insert(static_cast<FakeInstance&>(instance).id);
    }
    both_running.DecrementCount();
    release.WaitForNotification();
    for (auto& r : requests) r->callback(InferResponse{});
  };
  absl::Status s1, s2;
  absl::BlockingCounter done(2);
  InstancePool pool({"m", 10}, MakeInstances(2), std::move(runner));
  pool.Enqueue(MakeRequest("a", &s1, &done));
  pool.Enqueue(MakeRequest("b", &s2, &done));
  both_running.Wait();
  release.Notify();
  done.Wait();
  EXPECT_EQ(ids, (std::set<int>{0, 1}));
}

TEST(InstancePoolTest, FullQueueRejectsAtOnceAndDestructorDrains) {
  absl::Notification running;
  absl::Notification release;
  std::atomic<int> executed{0};
  BatchRunner runner = [&](ModelInstance&, ScheduledRequests requests) {
    if (!running.HasBeenNotified()) running.Notify();
    release.WaitForNotification();
    for (auto& r : requests) {
      ++executed;
      r->callback(InferResponse{});
    }
  };
  std::vector<absl::Status> statuses(5, absl::UnknownError("not run"));
  absl::BlockingCounter done(5);
  {
    InstancePool pool({"m", 2}, MakeInstances(1), std::move(runner));
    pool.Enqueue(MakeRequest("0", &statuses[0], &done));  // executing
    running.WaitForNotification();
    pool.Enqueue(MakeRequest("1", &statuses[1], &done));  // queued
    pool.Enqueue(MakeRequest("2", &statuses[2], &done));  // queued (queue now full)
    pool.Enqueue(MakeRequest("3", &statuses[3], &done));  // rejected synchronously
    EXPECT_EQ(statuses[3].code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(statuses[3].message()), ::testing::HasSubstr("queue is full"));
    EXPECT_EQ(pool.QueueDepth(), 2u);
    release.Notify();
    pool.Enqueue(MakeRequest("4", &statuses[4], &done));  // may queue or be rejected
  }  // destructor: drains the queue, joins
  done.Wait();
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_TRUE(statuses[1].ok());
  EXPECT_TRUE(statuses[2].ok());
  EXPECT_EQ(executed.load(), statuses[4].ok() ? 4 : 3);
}

}  // namespace
}  // namespace infera
