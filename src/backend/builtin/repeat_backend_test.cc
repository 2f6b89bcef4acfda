// The `repeat` decoupled test backend (repeat_backend.cc, repeat_responder.h): its
// responses, their order and pacing inputs, how a stopped request ends, and the model's
// thread ending every request at CancelOutstandingWork. A fake ResponseSink stands in for
// the model version; tests wait on its final call (a Notification), never on time.
#include <cstring>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "backend/builtin/builtin_backends.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

constexpr char kRepeatConfig[] = R"pb(
  name: "repeat_int32" backend: "repeat" max_batch_size: 0
  model_transaction_policy { decoupled: true }
  input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] },
          { name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] optional: true },
          { name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] optional: true } ]
  output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] },
           { name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] } ]
)pb";

inference::ModelConfig Config(const std::string& text = kRepeatConfig) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

template <typename T>
Tensor Make(const std::string& name, DataType dtype, std::vector<T> values) {
  return Tensor{name, dtype, {static_cast<int64_t>(values.size())},
                Buffer::Copy(values.data(), values.size() * sizeof(T))};
}

template <typename T>
T Scalar(const Tensor& t) {
  T value{};
  std::memcpy(&value, t.data.data(), sizeof(T));
  return value;
}

// Records what the backend sends for one request; stopped as the model version's sink is:
// its token cancelled or its deadline passed.
class RecordingSink : public ResponseSink {
 public:
  RecordingSink(std::shared_ptr<const CancellationToken> token,
                std::optional<std::chrono::steady_clock::time_point> deadline)
      : token_(std::move(token)), deadline_(deadline) {}
  absl::Status Send(std::vector<Tensor> outputs, bool final) override {
    absl::MutexLock lock(&mu_);
    responses_.push_back(std::move(outputs));
    if (final) Done(absl::OkStatus());
    return absl::OkStatus();
  }
  void Finish(absl::Status status) override {
    absl::MutexLock lock(&mu_);
    Done(std::move(status));
  }
  void SetGenerationTimings(const GenerationTimings&) override {}
  bool IsStopped() const override {
    return (token_ && token_->IsCancelled()) || (deadline_ && *deadline_ <= std::chrono::steady_clock::now());
  }

  // The status the request ended with (waits up to 30 s for it).
  absl::Status AwaitFinal() {
    EXPECT_TRUE(finished_.WaitForNotificationWithTimeout(absl::Seconds(30)));
    absl::MutexLock lock(&mu_);
    return final_status_;
  }
  std::vector<std::vector<Tensor>> responses() {
    absl::MutexLock lock(&mu_);
    return responses_;
  }
  size_t response_count() {
    absl::MutexLock lock(&mu_);
    return responses_.size();
  }

 private:
  void Done(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ASSERT_FALSE(finished_.HasBeenNotified()) << "a second final call";
    final_status_ = std::move(status);
    finished_.Notify();
  }

  const std::shared_ptr<const CancellationToken> token_;
  const std::optional<std::chrono::steady_clock::time_point> deadline_;
  absl::Mutex mu_;
  std::vector<std::vector<Tensor>> responses_ ABSL_GUARDED_BY(mu_);
  absl::Status final_status_ ABSL_GUARDED_BY(mu_);
  absl::Notification finished_;
};

class RepeatBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(backend_->ValidateConfig(config_).ok());
    auto model = backend_->Load(ModelLoadContext{&config_, 1, {}, {}});
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = std::move(*model);
    auto instance = model_->CreateInstance(InstanceOptions{});
    ASSERT_TRUE(instance.ok());
    instance_ = std::move(*instance);
  }

  // Sends one request; returns its sink. `token` may be null (never cancelled).
  std::shared_ptr<RecordingSink> Run(std::vector<Tensor> inputs,
                                     std::shared_ptr<CancellationToken> token = nullptr,
                                     std::optional<std::chrono::steady_clock::time_point> deadline = {}) {
    auto sink = std::make_shared<RecordingSink>(token, deadline);
    std::vector<ModelInstance::DecoupledRequest> requests;
    requests.push_back({std::move(inputs), RequestContext{&parameters_, token, deadline, 1}, ResponseSender(sink)});
    instance_->ExecuteDecoupled(std::move(requests));
    return sink;
  }

  const Parameters parameters_{};
  std::unique_ptr<Backend> backend_ = CreateRepeatBackend();
  inference::ModelConfig config_ = Config();
  std::unique_ptr<LoadedModel> model_;
  std::unique_ptr<ModelInstance> instance_;
};

TEST_F(RepeatBackendTest, OneResponsePerValueInOrderThenTheEmptyFinal) {
  auto sink = Run({Make<int32_t>("IN", DataType::kInt32, {7, -3, 42})});
  EXPECT_TRUE(sink->AwaitFinal().ok());
  const auto responses = sink->responses();
  ASSERT_EQ(responses.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(responses[i].size(), 2u);
    EXPECT_EQ(responses[i][0].name, "OUT");
    EXPECT_EQ(responses[i][0].shape, Shape{1});
    EXPECT_EQ(responses[i][1].name, "IDX");
    EXPECT_EQ(responses[i][1].dtype, DataType::kUint32);
    EXPECT_EQ(Scalar<uint32_t>(responses[i][1]), i);
  }
  EXPECT_EQ(Scalar<int32_t>(responses[0][0]), 7);
  EXPECT_EQ(Scalar<int32_t>(responses[1][0]), -3);
  EXPECT_EQ(Scalar<int32_t>(responses[2][0]), 42);
}

TEST_F(RepeatBackendTest, EmptyInputGetsOnlyTheFinalFlag) {
  auto sink = Run({Make<int32_t>("IN", DataType::kInt32, {})});
  EXPECT_TRUE(sink->AwaitFinal().ok());
  EXPECT_EQ(sink->response_count(), 0u);
}

TEST_F(RepeatBackendTest, DelayAndWaitAreAccepted) {
  auto sink = Run({Make<int32_t>("IN", DataType::kInt32, {1, 2}), Make<uint32_t>("DELAY", DataType::kUint32, {1, 2}),
                   Make<uint32_t>("WAIT", DataType::kUint32, {1})});
  EXPECT_TRUE(sink->AwaitFinal().ok());
  EXPECT_EQ(sink->response_count(), 2u);
  auto one_delay = Run({Make<int32_t>("IN", DataType::kInt32, {1, 2, 3}), Make<uint32_t>("DELAY", DataType::kUint32, {1})});
  EXPECT_TRUE(one_delay->AwaitFinal().ok());
  EXPECT_EQ(one_delay->response_count(), 3u);
}

TEST_F(RepeatBackendTest, DelayCountMustMatch) {
  auto sink = Run({Make<int32_t>("IN", DataType::kInt32, {1, 2, 3}), Make<uint32_t>("DELAY", DataType::kUint32, {1, 2})});
  const absl::Status status = sink->AwaitFinal();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("DELAY holds 2 values"));
  EXPECT_EQ(sink->response_count(), 0u);
}

TEST_F(RepeatBackendTest, ACancelledRequestStopsWithoutWaitingOutItsDelay) {
  auto token = std::make_shared<CancellationToken>();
  // An hour per response: only the stop check can end it.
  auto sink = Run({Make<int32_t>("IN", DataType::kInt32, {1, 2, 3}),
                   Make<uint32_t>("DELAY", DataType::kUint32, {3'600'000})},
                  token);
  token->Cancel();
  const absl::Status status = sink->AwaitFinal();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_EQ(sink->response_count(), 0u);
}

TEST_F(RepeatBackendTest, AnExpiredRequestEndsDeadlineExceeded) {
  auto sink = Run({Make<int32_t>("IN", DataType::kInt32, {1, 2})}, std::make_shared<CancellationToken>(),
                  std::chrono::steady_clock::now() - std::chrono::seconds(1));
  const absl::Status status = sink->AwaitFinal();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_EQ(sink->response_count(), 0u);
}

TEST_F(RepeatBackendTest, CancelOutstandingWorkEndsEveryRequestAndRefusesNewOnes) {
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  for (int i = 0; i < 5; ++i) {
    sinks.push_back(Run({Make<int32_t>("IN", DataType::kInt32, {1, 2}),
                         Make<uint32_t>("DELAY", DataType::kUint32, {3'600'000})}));
  }
  model_->CancelOutstandingWork();
  for (auto& sink : sinks) {
    const absl::Status status = sink->AwaitFinal();
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
    EXPECT_THAT(status.message(), HasSubstr("being unloaded"));
  }
  auto late = Run({Make<int32_t>("IN", DataType::kInt32, {1})});
  EXPECT_EQ(late->AwaitFinal().code(), absl::StatusCode::kUnavailable);
  model_->CancelOutstandingWork();  // idempotent
}

TEST_F(RepeatBackendTest, ManyRequestsInterleaveOnTheModelsOneThread) {
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  for (int32_t r = 0; r < 40; ++r) {
    sinks.push_back(Run({Make<int32_t>("IN", DataType::kInt32, {r, r + 1, r + 2, r + 3}),
                         Make<uint32_t>("DELAY", DataType::kUint32, {static_cast<uint32_t>(r % 3)})}));
  }
  for (int32_t r = 0; r < 40; ++r) {
    ASSERT_TRUE(sinks[r]->AwaitFinal().ok());
    const auto responses = sinks[r]->responses();
    ASSERT_EQ(responses.size(), 4u);
    for (uint32_t i = 0; i < 4; ++i) {
      EXPECT_EQ(Scalar<int32_t>(responses[i][0]), r + static_cast<int32_t>(i));
      EXPECT_EQ(Scalar<uint32_t>(responses[i][1]), i);
    }
  }
}

TEST_F(RepeatBackendTest, DestroyingTheModelEndsItsRequests) {
  auto sink = Run({Make<int32_t>("IN", DataType::kInt32, {1}), Make<uint32_t>("DELAY", DataType::kUint32, {3'600'000})});
  instance_.reset();
  model_.reset();
  EXPECT_EQ(sink->AwaitFinal().code(), absl::StatusCode::kCancelled);
}

TEST(RepeatBackendConfigTest, RefusesConfigsItCannotServe) {
  auto backend = CreateRepeatBackend();
  EXPECT_TRUE(backend->SupportsDecoupled());
  auto refused = [&](const std::string& from, const std::string& to) {
    std::string text = kRepeatConfig;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return backend->ValidateConfig(Config(text));
  };
  EXPECT_THAT(refused("decoupled: true", "decoupled: false").message(), HasSubstr("decoupled"));
  EXPECT_THAT(refused("max_batch_size: 0", "max_batch_size: 4").message(), HasSubstr("max_batch_size"));
  EXPECT_THAT(refused("name: \"IN\" data_type: TYPE_INT32", "name: \"IN\" data_type: TYPE_FP32").message(),
              HasSubstr("'IN' must be TYPE_INT32 [-1]"));
  EXPECT_THAT(refused("name: \"WAIT\"", "name: \"SLEEP\"").message(), HasSubstr("unknown input 'SLEEP'"));
  EXPECT_THAT(refused("name: \"IDX\" data_type: TYPE_UINT32", "name: \"IDX\" data_type: TYPE_INT32").message(),
              HasSubstr("'IDX' must be TYPE_UINT32 [1]"));
  EXPECT_THAT(refused("name: \"OUT\"", "name: \"VALUE\"").message(), HasSubstr("unknown output 'VALUE'"));
}

}  // namespace
}  // namespace infera
