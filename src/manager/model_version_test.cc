// ModelVersion::RunBatch's isolation of bad requests: a batch that fails with
// InvalidArgument is rerun one request at a time, so only the request at fault fails.
#include "manager/model_version.h"

#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int32_t kBadRow = -1;       // the backend refuses it: InvalidArgument
constexpr int32_t kFaultyRow = -2;    // the backend breaks on it: Internal
constexpr int32_t kShortOutputRow = -3;  // the backend answers 4 bytes short: a model fault

// A backend whose instances double an INT32 [B, 1] input, refuse a batch holding a
// kBadRow row (InvalidArgument, naming the row) and fail on a kFaultyRow row (Internal).
// It records the rows of every execution and can run a hook inside an execution.
class MarkerBackend : public Backend {
 public:
  explicit MarkerBackend(bool runs_inline = false) : runs_inline_(runs_inline) {}

  std::string_view name() const override { return "marker"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override { return absl::OkStatus(); }
  bool RunsInline() const override { return runs_inline_; }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
    return std::unique_ptr<LoadedModel>(new Model(this));
  }

  // Runs inside the next executions, before they answer; `rows` is the execution's rows.
  void SetHook(std::function<void(const std::vector<int32_t>& rows)> hook) {
    absl::MutexLock lock(&mu_);
    hook_ = std::move(hook);
  }
  // The row counts of every execution so far, in order.
  std::vector<size_t> Executions() const {
    absl::MutexLock lock(&mu_);
    return executions_;
  }

 private:
  class Instance : public ModelInstance {
   public:
    explicit Instance(MarkerBackend* backend) : backend_(backend) {}
    absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
      std::vector<int32_t> rows(inputs[0].data.size() / sizeof(int32_t));
      std::memcpy(rows.data(), inputs[0].data.data(), inputs[0].data.size());
      std::function<void(const std::vector<int32_t>&)> hook;
      {
        absl::MutexLock lock(&backend_->mu_);
        backend_->executions_.push_back(rows.size());
        hook = backend_->hook_;
      }
      if (hook) hook(rows);
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i] == kFaultyRow) return absl::InternalError(StrCat("row ", i, ": the model broke"));
        if (rows[i] == kBadRow) return absl::InvalidArgumentError(StrCat("row ", i, ": the marker is not allowed"));
        rows[i] *= 2;
      }
      size_t bytes = rows.size() * sizeof(int32_t);
      for (int32_t row : rows) bytes -= row == 2 * kShortOutputRow ? sizeof(int32_t) : 0;
      uint8_t* out;
      Tensor result{"OUT", DataType::kInt32, inputs[0].shape, Buffer::Allocate(bytes, &out)};
      std::memcpy(out, rows.data(), bytes);
      std::vector<Tensor> outputs;
      outputs.push_back(std::move(result));
      return outputs;
    }

   private:
    MarkerBackend* const backend_;
  };
  class Model : public LoadedModel {
   public:
    explicit Model(MarkerBackend* backend) : backend_(backend) {}
    absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
      return std::unique_ptr<ModelInstance>(new Instance(backend_));
    }

   private:
    MarkerBackend* const backend_;
  };

  const bool runs_inline_;
  mutable absl::Mutex mu_;
  std::vector<size_t> executions_ ABSL_GUARDED_BY(mu_);
  std::function<void(const std::vector<int32_t>&)> hook_ ABSL_GUARDED_BY(mu_);
};

// A batch runs as soon as `preferred_rows` rows wait; nothing runs before (a minute's
// delay), so the requests a test sends form exactly one batch.
std::string Config(int preferred_rows, const std::string& more_batching = "") {
  return StrCat(R"pb(
    name: "marker" backend: "marker" max_batch_size: 8
    input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
    output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
    instance_group [ { count: 1 kind: KIND_CPU } ]
    dynamic_batching { max_queue_delay_microseconds: 60000000 preferred_batch_size: [ )pb",
                preferred_rows, " ] ", more_batching, " }");
}

// Collects the outcomes of requests, by index; waits for them with a deadline.
class Outcomes {
 public:
  InferCallback Callback(size_t index) {
    return [this, index](absl::StatusOr<InferResponse> result, ResponseDelivery) {
      absl::MutexLock lock(&mu_);
      results_.emplace(index, std::move(result));
    };
  }
  // Waits (at most 30 s) for `n` outcomes; false if they did not all come.
  bool Await(size_t n) {
    absl::MutexLock lock(&mu_);
    auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return results_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(30));
  }
  absl::StatusOr<InferResponse> Take(size_t index) {
    absl::MutexLock lock(&mu_);
    auto it = results_.find(index);
    if (it == results_.end()) return absl::NotFoundError("no outcome");
    return std::move(it->second);
  }

 private:
  absl::Mutex mu_;
  std::map<size_t, absl::StatusOr<InferResponse>> results_ ABSL_GUARDED_BY(mu_);
};

InferRequest Request(std::vector<int32_t> rows, std::string id = "") {
  InferRequest request;
  request.model_name = "marker";
  request.id = std::move(id);
  request.arrival_time = std::chrono::steady_clock::now();
  Tensor in{"IN", DataType::kInt32, {static_cast<int64_t>(rows.size()), 1},
            Buffer::Copy(rows.data(), rows.size() * sizeof(int32_t))};
  request.inputs.push_back(std::move(in));
  return request;
}

std::vector<int32_t> Values(const absl::StatusOr<InferResponse>& result) {
  if (!result.ok() || result->outputs.size() != 1) return {};
  const Tensor& out = result->outputs[0];
  std::vector<int32_t> values(out.data.size() / sizeof(int32_t));
  std::memcpy(values.data(), out.data.data(), out.data.size());
  return values;
}

class ModelVersionIsolationTest : public ::testing::Test {
 protected:
  void Load(const std::string& config_text, bool runs_inline = false) {
    backend_.emplace(runs_inline);
    auto config = std::make_shared<inference::ModelConfig>();
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(config_text, config.get()));
    ModelVersion::Options options;
    options.config = config;
    options.version = 1;
    options.model_dir = std::filesystem::temp_directory_path();
    options.backend = &*backend_;
    auto version = ModelVersion::Load(std::move(options));
    ASSERT_TRUE(version.ok()) << version.status();
    version_ = std::move(*version);
  }
  void TearDown() override {
    if (version_) version_->Shutdown();
  }
  StatisticsSnapshot::BatchSize BatchStats(uint64_t size) const {
    for (const auto& b : version_->statistics().Snapshot().batch_stats) {
      if (b.batch_size == size) return b;
    }
    return {};
  }

  std::optional<MarkerBackend> backend_;
  std::shared_ptr<ModelVersion> version_;
  Outcomes outcomes_;
};

TEST_F(ModelVersionIsolationTest, ABadRequestFailsAloneAndItsBatchPartnersSucceed) {
  Load(Config(5));
  version_->Infer(Request({1, 2}, "two_rows"), outcomes_.Callback(0));
  version_->Infer(Request({kBadRow}, "bad"), outcomes_.Callback(1));
  version_->Infer(Request({3}, "one"), outcomes_.Callback(2));
  version_->Infer(Request({4}, "four"), outcomes_.Callback(3));
  ASSERT_TRUE(outcomes_.Await(4));

  auto two_rows = outcomes_.Take(0);
  ASSERT_TRUE(two_rows.ok()) << two_rows.status();
  EXPECT_EQ(two_rows->id, "two_rows");
  EXPECT_THAT(Values(two_rows), ElementsAre(2, 4));
  EXPECT_EQ(two_rows->outputs[0].shape, (Shape{2, 1}));
  auto bad = outcomes_.Take(1);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  // Run alone, its error names its own row.
  EXPECT_THAT(bad.status().message(), HasSubstr("row 0: the marker is not allowed"));
  EXPECT_THAT(Values(outcomes_.Take(2)), ElementsAre(6));
  auto four = outcomes_.Take(3);
  EXPECT_THAT(Values(four), ElementsAre(8));
  // Its answer came from a run of its own, which started when its batch left the queue.
  EXPECT_EQ(four->timings.batch_requests, 1);
  EXPECT_EQ(four->timings.batch_rows, 1);

  // The batch of 5 rows, then each request alone, in order.
  EXPECT_THAT(backend_->Executions(), ElementsAre(5, 2, 1, 1, 1));
  StatisticsSnapshot stats = version_->statistics().Snapshot();
  EXPECT_EQ(stats.success.count, 3u);
  EXPECT_EQ(stats.fail.count, 1u);
  EXPECT_EQ(stats.failures.bad_request, 1u);
  EXPECT_EQ(stats.inference_count, 4u);  // rows served
  // The failed batch and the three successful solo runs are executions; the batch is
  // no request's compute time, so each request's compute is counted once.
  EXPECT_EQ(stats.execution_count, 4u);
  EXPECT_EQ(BatchStats(5).compute_infer.count, 1u);
  EXPECT_EQ(BatchStats(2).compute_infer.count, 1u);
  EXPECT_EQ(BatchStats(1).compute_infer.count, 2u);
  EXPECT_EQ(stats.compute_infer.count, 3u);
  EXPECT_EQ(stats.queue.count, 3u);
  EXPECT_EQ(version_->InFlight(), 0);
}

TEST_F(ModelVersionIsolationTest, AHealthyBatchRunsOnce) {
  Load(Config(3));
  for (int i = 0; i < 3; ++i) version_->Infer(Request({i + 1}), outcomes_.Callback(i));
  ASSERT_TRUE(outcomes_.Await(3));
  for (int i = 0; i < 3; ++i) {
    auto result = outcomes_.Take(i);
    EXPECT_THAT(Values(result), ElementsAre(2 * (i + 1)));
    EXPECT_EQ(result->timings.batch_requests, 3);
  }
  EXPECT_THAT(backend_->Executions(), ElementsAre(3));
  EXPECT_EQ(version_->statistics().Snapshot().execution_count, 1u);
}

TEST_F(ModelVersionIsolationTest, AModelFaultStillFailsTheWholeBatch) {
  Load(Config(3));
  version_->Infer(Request({1}), outcomes_.Callback(0));
  version_->Infer(Request({kFaultyRow}), outcomes_.Callback(1));
  version_->Infer(Request({kBadRow}), outcomes_.Callback(2));
  ASSERT_TRUE(outcomes_.Await(3));
  // Internal is the model's fault, not a request's: nothing is rerun.
  for (int i = 0; i < 3; ++i) {
    auto result = outcomes_.Take(i);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal) << i;
    EXPECT_THAT(result.status().message(), HasSubstr("row 1: the model broke"));
  }
  EXPECT_THAT(backend_->Executions(), ElementsAre(3));
  StatisticsSnapshot stats = version_->statistics().Snapshot();
  EXPECT_EQ(stats.failures.backend_error, 3u);
  EXPECT_EQ(stats.execution_count, 0u);
}

TEST_F(ModelVersionIsolationTest, OutputsThatBreakTheConfigFailTheWholeBatch) {
  Load(Config(3));
  version_->Infer(Request({1}), outcomes_.Callback(0));
  version_->Infer(Request({kShortOutputRow}), outcomes_.Callback(1));
  version_->Infer(Request({3}), outcomes_.Callback(2));
  ASSERT_TRUE(outcomes_.Await(3));
  // The output check's finding is the model's fault, whatever code the check used.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(outcomes_.Take(i).status().code(), absl::StatusCode::kInternal) << i;
  EXPECT_THAT(backend_->Executions(), ElementsAre(3));
}

TEST_F(ModelVersionIsolationTest, EveryRequestBadFailsEachWithItsOwnError) {
  Load(Config(3));
  version_->Infer(Request({kBadRow}), outcomes_.Callback(0));
  version_->Infer(Request({5, kBadRow}), outcomes_.Callback(1));
  ASSERT_TRUE(outcomes_.Await(2));
  EXPECT_THAT(outcomes_.Take(0).status().message(), HasSubstr("row 0:"));
  EXPECT_THAT(outcomes_.Take(1).status().message(), HasSubstr("row 1:"));
  EXPECT_THAT(backend_->Executions(), ElementsAre(3, 1, 2));
  StatisticsSnapshot stats = version_->statistics().Snapshot();
  EXPECT_EQ(stats.failures.bad_request, 2u);
  EXPECT_EQ(stats.execution_count, 1u);  // the batch; the failed solo runs are not
}

TEST_F(ModelVersionIsolationTest, ARequestAloneIsNotRerun) {
  Load(Config(1));
  version_->Infer(Request({kBadRow}), outcomes_.Callback(0));
  ASSERT_TRUE(outcomes_.Await(1));
  EXPECT_EQ(outcomes_.Take(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(backend_->Executions(), ElementsAre(1));
  EXPECT_EQ(version_->statistics().Snapshot().execution_count, 0u);
}

TEST_F(ModelVersionIsolationTest, ARequestCancelledDuringItsBatchIsNotRerun) {
  Load(Config(3));
  auto token = std::make_shared<CancellationToken>();
  // The client goes away while the batch runs (the first execution).
  backend_->SetHook([token](const std::vector<int32_t>& rows) {
    if (rows.size() == 3) token->Cancel();
  });
  version_->Infer(Request({1}), outcomes_.Callback(0));
  version_->Infer(Request({kBadRow}), outcomes_.Callback(1));
  InferRequest leaving = Request({3});
  leaving.cancellation = token;
  version_->Infer(std::move(leaving), outcomes_.Callback(2));
  ASSERT_TRUE(outcomes_.Await(3));
  EXPECT_THAT(Values(outcomes_.Take(0)), ElementsAre(2));
  EXPECT_EQ(outcomes_.Take(1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(outcomes_.Take(2).status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(backend_->Executions(), ElementsAre(3, 1, 1));
  EXPECT_EQ(version_->statistics().Snapshot().failures.cancelled, 1u);
}

TEST_F(ModelVersionIsolationTest, ARequestPastItsDeadlineIsNotRerun) {
  Load(Config(3, "default_queue_policy { allow_timeout_override: true }"));
  // The batch starts after the timed request entered the queue and runs past its
  // deadline (1 s after that).
  backend_->SetHook([](const std::vector<int32_t>& rows) {
    if (rows.size() == 3) std::this_thread::sleep_for(std::chrono::milliseconds(1001));
  });
  InferRequest timed = Request({1});
  timed.parameters["timeout"] = int64_t{1000000};  // µs
  version_->Infer(std::move(timed), outcomes_.Callback(0));
  version_->Infer(Request({kBadRow}), outcomes_.Callback(1));
  version_->Infer(Request({3}), outcomes_.Callback(2));
  ASSERT_TRUE(outcomes_.Await(3));
  EXPECT_EQ(outcomes_.Take(0).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(outcomes_.Take(1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Values(outcomes_.Take(2)), ElementsAre(6));
  EXPECT_THAT(backend_->Executions(), ElementsAre(3, 1, 1));
  EXPECT_EQ(version_->statistics().Snapshot().failures.timeout, 1u);
}

TEST_F(ModelVersionIsolationTest, AnInlineBackendsQueuedBatchIsIsolatedToo) {
  // Delay 0: a request that finds the instance idle runs inline on the caller's thread.
  Load(R"pb(
    name: "marker" backend: "marker" max_batch_size: 8
    input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
    output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
    instance_group [ { count: 1 kind: KIND_CPU } ]
    dynamic_batching { }
  )pb",
       /*runs_inline=*/true);
  absl::Notification started, release;
  backend_->SetHook([&](const std::vector<int32_t>& rows) {
    if (rows.size() == 1 && rows[0] == 100 && !started.HasBeenNotified()) {
      started.Notify();
      release.WaitForNotification();
    }
  });
  std::thread first([&] { version_->Infer(Request({100}), outcomes_.Callback(0)); });
  started.WaitForNotification();
  // The instance is busy inline: these two queue and then run as one batch.
  version_->Infer(Request({kBadRow}), outcomes_.Callback(1));
  version_->Infer(Request({7}), outcomes_.Callback(2));
  EXPECT_EQ(version_->QueueDepth(), 2u);
  release.Notify();
  first.join();
  ASSERT_TRUE(outcomes_.Await(3));
  EXPECT_THAT(Values(outcomes_.Take(0)), ElementsAre(200));
  EXPECT_EQ(outcomes_.Take(1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Values(outcomes_.Take(2)), ElementsAre(14));
  EXPECT_THAT(backend_->Executions(), ElementsAre(1, 2, 1, 1));
}

}  // namespace
}  // namespace infera
