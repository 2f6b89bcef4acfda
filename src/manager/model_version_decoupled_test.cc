// The request path's new seams (docs/request_path.md): decoupled models answered through
// ResponseSenders, the execution context a backend sees (cancelled and expired requests
// answered before execution, warm-ups marked), the bounded drain, the one-response
// adapter for unary frontends, and snapshots.
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "manager/model_version.h"
#include "manager/single_response.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

Tensor Int32(std::string name, std::vector<int32_t> values, Shape shape) {
  return Tensor{std::move(name), DataType::kInt32, std::move(shape),
                Buffer::Copy(values.data(), values.size() * sizeof(int32_t))};
}

std::vector<int32_t> Values(const Tensor& t) {
  std::vector<int32_t> v(t.data.size() / sizeof(int32_t));
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

// A decoupled backend: each request's IN [n] becomes n responses OUT [1] = IN[i], sent
// from a thread of its own, then the empty final response. A request whose IN holds -1
// makes the instance drop its sender (a backend bug); -2 sends an output the config does
// not declare. `gate` (when set) holds every sender thread until it is notified.
class RepeatBackend : public Backend {
 public:
  std::string_view name() const override { return "repeat_test"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override { return absl::OkStatus(); }
  bool SupportsDecoupled() const override { return true; }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
    return std::unique_ptr<LoadedModel>(new Model(this));
  }
  ~RepeatBackend() override { Join(); }
  void Join() {
    std::vector<std::thread> threads;
    {
      absl::MutexLock lock(&mu_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }
  std::optional<absl::Notification> gate;
  absl::Notification executed;  // a request reached ExecuteDecoupled

 private:
  class Instance : public ModelInstance {
   public:
    explicit Instance(RepeatBackend* backend) : backend_(backend) {}
    absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor>, const ExecutionContext&) override {
      return absl::InternalError("not called for a decoupled model");
    }
    void ExecuteDecoupled(std::vector<DecoupledRequest> requests) override {
      if (!backend_->executed.HasBeenNotified()) backend_->executed.Notify();
      for (DecoupledRequest& r : requests) {
        std::vector<int32_t> values = Values(r.inputs[0]);
        if (!values.empty() && values[0] == -1) continue;  // the sender is dropped here
        absl::MutexLock lock(&backend_->mu_);
        backend_->threads_.emplace_back([this, values, sender = std::move(r.sender)]() mutable {
          if (backend_->gate) backend_->gate->WaitForNotification();
          for (int32_t v : values) {
            if (sender.IsStopped()) return sender.Finish(absl::CancelledError("stopped"));
            std::vector<Tensor> out;
            out.push_back(Int32(v == -2 ? "NOPE" : "OUT", {v}, {1}));
            if (!sender.Send(std::move(out)).ok()) return;
          }
          sender.Finish();
        });
      }
    }

   private:
    RepeatBackend* const backend_;
  };
  class Model : public LoadedModel {
   public:
    explicit Model(RepeatBackend* backend) : backend_(backend) {}
    absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
      return std::unique_ptr<ModelInstance>(new Instance(backend_));
    }
    void CancelOutstandingWork() override {
      if (backend_->gate && !backend_->gate->HasBeenNotified()) backend_->gate->Notify();
      backend_->Join();
    }

   private:
    RepeatBackend* const backend_;
  };

  absl::Mutex mu_;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

constexpr char kRepeatConfig[] = R"pb(
  name: "repeat" backend: "repeat_test" max_batch_size: 0
  input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] } ]
  output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
  instance_group [ { count: 1 kind: KIND_CPU } ]
  model_transaction_policy { decoupled: true }
)pb";

// Every call a request's callback gets, in order.
struct Events {
  absl::Mutex mu;
  std::vector<std::pair<absl::StatusOr<InferResponse>, bool>> calls ABSL_GUARDED_BY(mu);
  InferCallback Callback() {
    return [this](absl::StatusOr<InferResponse> result, ResponseDelivery delivery) {
      absl::MutexLock lock(&mu);
      calls.emplace_back(std::move(result), delivery.final);
    };
  }
  bool AwaitFinal() {
    absl::MutexLock lock(&mu);
    auto final = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return !calls.empty() && calls.back().second; };
    return mu.AwaitWithTimeout(absl::Condition(&final), absl::Seconds(30));
  }
};

class DecoupledTest : public ::testing::Test {
 protected:
  std::shared_ptr<ModelVersion> Load(const std::string& text, Backend& backend) {
    auto config = std::make_shared<inference::ModelConfig>();
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, config.get()));
    ModelVersion::Options options;
    options.config = config;
    options.version = 1;
    options.model_dir = std::filesystem::temp_directory_path();
    options.backend = &backend;
    auto version = ModelVersion::Load(std::move(options));
    EXPECT_TRUE(version.ok()) << version.status();
    if (version.ok()) versions_.push_back(*version);
    return version.ok() ? *version : nullptr;
  }
  // As the manager does: the last reference is released only once no handle is left
  // (a sender's handle goes just after its final callback returns), so that a version is
  // never destroyed on one of its own threads.
  void TearDown() override {
    for (auto& version : versions_) {
      EXPECT_TRUE(version->AwaitNoHandles(absl::Now() + absl::Seconds(30)));
      version->Shutdown();
    }
    backend_.Join();
  }
  InferRequest Request(std::vector<int32_t> values) {
    InferRequest request;
    request.model_name = "repeat";
    request.arrival_time = std::chrono::steady_clock::now();
    request.inputs.push_back(Int32("IN", values, {static_cast<int64_t>(values.size())}));
    return request;
  }
  RepeatBackend backend_;
  std::vector<std::shared_ptr<ModelVersion>> versions_;
};

TEST_F(DecoupledTest, ResponsesArriveInOrderThenTheEmptyFinalAndTheRequestIsCountedOnce) {
  std::shared_ptr<ModelVersion> version = Load(kRepeatConfig, backend_);
  ASSERT_TRUE(version);
  EXPECT_TRUE(version->decoupled());
  Events events;
  version->Infer(Request({7, 8, 9}), events.Callback());
  ASSERT_TRUE(events.AwaitFinal());
  absl::MutexLock lock(&events.mu);
  ASSERT_EQ(events.calls.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(events.calls[i].first.ok()) << events.calls[i].first.status();
    EXPECT_FALSE(events.calls[i].second);
    EXPECT_EQ(Values(events.calls[i].first->outputs.at(0)), std::vector<int32_t>{7 + i});
  }
  ASSERT_TRUE(events.calls[3].first.ok());
  EXPECT_TRUE(events.calls[3].second);
  EXPECT_TRUE(events.calls[3].first->outputs.empty());  // the empty final response
  const StatisticsSnapshot stats = version->statistics().Snapshot();
  EXPECT_EQ(stats.success.count, 1u);
  EXPECT_EQ(stats.execution_count, 1u);
  EXPECT_EQ(version->InFlight(), 0);
  // The sender's handle goes right after its final response.
  EXPECT_TRUE(version->AwaitNoHandles(absl::Now() + absl::Seconds(30)));
}

TEST_F(DecoupledTest, TheSenderHoldsAHandleUntilTheFinalResponse) {
  backend_.gate.emplace();
  std::shared_ptr<ModelVersion> version = Load(kRepeatConfig, backend_);
  ASSERT_TRUE(version);
  Events events;
  version->Infer(Request({1}), events.Callback());
  // Executed (handed to the backend's thread), not answered: the version is held.
  backend_.executed.WaitForNotification();
  EXPECT_EQ(version->NumHandles(), 1);
  EXPECT_FALSE(version->AwaitNoHandles(absl::Now()));
  backend_.gate->Notify();
  ASSERT_TRUE(events.AwaitFinal());
  EXPECT_TRUE(version->AwaitNoHandles(absl::Now() + absl::Seconds(30)));
}

TEST_F(DecoupledTest, CancelOutstandingWorkStopsTheSenders) {
  backend_.gate.emplace();
  std::shared_ptr<ModelVersion> version = Load(kRepeatConfig, backend_);
  ASSERT_TRUE(version);
  Events events;
  version->Infer(Request({1, 2, 3}), events.Callback());
  backend_.executed.WaitForNotification();
  version->CancelOutstandingWork();  // releases the gate; the senders see IsStopped()
  ASSERT_TRUE(events.AwaitFinal());
  absl::MutexLock lock(&events.mu);
  ASSERT_EQ(events.calls.size(), 1u);
  EXPECT_EQ(events.calls[0].first.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(version->statistics().Snapshot().failures.cancelled, 1u);
}

TEST_F(DecoupledTest, ADroppedSenderFailsTheRequestInsteadOfHangingIt) {
  std::shared_ptr<ModelVersion> version = Load(kRepeatConfig, backend_);
  ASSERT_TRUE(version);
  Events events;
  version->Infer(Request({-1}), events.Callback());
  ASSERT_TRUE(events.AwaitFinal());
  absl::MutexLock lock(&events.mu);
  ASSERT_EQ(events.calls.size(), 1u);
  EXPECT_EQ(events.calls[0].first.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(events.calls[0].first.status().message(), HasSubstr("no final response"));
}

TEST_F(DecoupledTest, AResponseThatBreaksTheConfigFailsTheRequest) {
  std::shared_ptr<ModelVersion> version = Load(kRepeatConfig, backend_);
  ASSERT_TRUE(version);
  Events events;
  version->Infer(Request({5, -2, 6}), events.Callback());
  ASSERT_TRUE(events.AwaitFinal());
  absl::MutexLock lock(&events.mu);
  ASSERT_EQ(events.calls.size(), 2u);  // the first response, then the failure; nothing after
  EXPECT_TRUE(events.calls[0].first.ok());
  EXPECT_EQ(events.calls[1].first.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(events.calls[1].first.status().message(), HasSubstr("'NOPE'"));
}

TEST_F(DecoupledTest, AConfigThatClaimsDecoupledNeedsABackendThatIs) {
  class OnceBackend : public Backend {
    std::string_view name() const override { return "once"; }
    absl::Status ValidateConfig(const inference::ModelConfig&) const override { return absl::OkStatus(); }
    absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
      return absl::InternalError("never loaded");
    }
  } once;
  auto config = std::make_shared<inference::ModelConfig>();
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kRepeatConfig, config.get()));
  ModelVersion::Options options;
  options.config = config;
  options.version = 1;
  options.backend = &once;
  auto version = ModelVersion::Load(std::move(options));
  EXPECT_EQ(version.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(version.status().message(), HasSubstr("decoupled"));
}

TEST(SingleResponseTest, TakesExactlyOneResponse) {
  auto run = [](std::vector<std::pair<absl::StatusOr<InferResponse>, bool>> calls) {
    std::optional<absl::StatusOr<InferResponse>> got;
    int finals = 0;
    InferCallback adapted = SingleResponse("m", [&](absl::StatusOr<InferResponse> r, ResponseDelivery d) {
      EXPECT_TRUE(d.final);  // the unary frontend only ever sees the final call
      ++finals;
      got = std::move(r);
    });
    for (auto& [result, final] : calls) adapted(std::move(result), ResponseDelivery{final, nullptr});
    EXPECT_EQ(finals, 1);
    return std::move(*got);
  };
  InferResponse data;
  data.outputs.push_back(Int32("OUT", {1}, {1}));
  InferResponse empty_final;
  // One final response with data, or one response and the empty final: accepted.
  EXPECT_TRUE(run({{data, true}}).ok());
  auto one = run({{data, false}, {empty_final, true}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->outputs.size(), 1u);
  // None, or two: refused naming the streaming calls.
  EXPECT_THAT(run({{empty_final, true}}).status().message(), HasSubstr("without a response"));
  EXPECT_THAT(run({{data, false}, {data, true}}).status().message(), HasSubstr("generate_stream"));
  EXPECT_THAT(run({{data, false}, {data, false}, {empty_final, true}}).status().message(),
              HasSubstr("more than one response"));
  // An error passes through.
  EXPECT_EQ(run({{data, false}, {absl::CancelledError("gone"), true}}).status().code(), absl::StatusCode::kCancelled);
}

// The second response cancels the request's own token (the model stops early), and the
// final call's Cancelled that follows is reported as the reason: too many responses.
TEST(SingleResponseTest, ASecondResponseStopsTheModel) {
  auto stop = std::make_shared<CancellationToken>();
  std::optional<absl::StatusOr<InferResponse>> got;
  InferCallback adapted = SingleResponse(
      "m", [&](absl::StatusOr<InferResponse> r, ResponseDelivery) { got = std::move(r); }, stop);
  InferResponse data;
  data.outputs.push_back(Int32("OUT", {1}, {1}));
  adapted(data, ResponseDelivery{false, nullptr});
  EXPECT_FALSE(stop->IsCancelled());
  adapted(data, ResponseDelivery{false, nullptr});
  EXPECT_TRUE(stop->IsCancelled());
  adapted(absl::CancelledError("request cancelled"), ResponseDelivery{true, nullptr});
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got->status().message(), HasSubstr("more than one response"));
}

}  // namespace
}  // namespace infera
