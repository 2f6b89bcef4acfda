// The one inference pipeline (infer_pipeline.h) with a fake transport: the order of its
// checks (what wins when a request is wrong in several ways), what it fills in the request,
// unary and streaming answers of a decoupled model, and encoder failures. Real models
// (add_sub `simple`, the decoupled `repeat`) behind a real ModelManager.
#include "protocol/infer_pipeline.h"

#include <cstring>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "backend/builtin/builtin_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/test_model_repository.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

constexpr char kSimple[] = R"pb(
  name: "simple" backend: "add_sub" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
)pb";

constexpr char kRepeat[] = R"pb(
  name: "repeat_int32" backend: "repeat" max_batch_size: 0
  model_transaction_policy { decoupled: true }
  input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] } ]
  output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] } ]
)pb";

Tensor Int32(std::string name, std::vector<int32_t> values, Shape shape) {
  return Tensor{std::move(name), DataType::kInt32, std::move(shape),
                Buffer::Copy(values.data(), values.size() * sizeof(int32_t))};
}

// What a responder saw, shared with the test (the pipeline owns the responder).
struct Calls {
  absl::Mutex mu;
  std::vector<std::pair<bool, size_t>> encoded ABSL_GUARDED_BY(mu);  // (final, outputs)
  std::vector<std::pair<absl::Status, bool>> sent ABSL_GUARDED_BY(mu);  // (status, final)
  std::string request_id ABSL_GUARDED_BY(mu);
  absl::Notification done;

  absl::Status AwaitFinal() {
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
    absl::MutexLock lock(&mu);
    return sent.empty() ? absl::InternalError("nothing sent") : sent.back().first;
  }
};

class FakeResponder : public InferResponder {
 public:
  FakeResponder(std::shared_ptr<Calls> calls, bool streams, absl::Status encode_error = absl::OkStatus())
      : calls_(std::move(calls)), streams_(streams), encode_error_(std::move(encode_error)) {}
  bool streams() const override { return streams_; }
  void Prepare(const InferRequest& request) override { prepared_ = &request; }
  absl::Status Encode(InferResponse& response, bool final) override {
    absl::MutexLock lock(&calls_->mu);
    calls_->encoded.emplace_back(final, response.outputs.size());
    return encode_error_;
  }
  void Send(const absl::Status& status, const InferSend& send) override {
    absl::MutexLock lock(&calls_->mu);
    ASSERT_FALSE(calls_->done.HasBeenNotified()) << "a call after the final one";
    calls_->sent.emplace_back(status, send.final);
    calls_->request_id = std::string(send.request_id);
    if (send.final) calls_->done.Notify();
  }

 private:
  std::shared_ptr<Calls> calls_;
  const bool streams_;
  const absl::Status encode_error_;
  const InferRequest* prepared_ = nullptr;
};

class InferPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.AddModel("simple", kSimple);
    repo_.AddModel("repeat_int32", kRepeat);
    registry_.Register(CreateAddSubBackend());
    registry_.Register(CreateRepeatBackend());
    auto manager = repo_.Load(&registry_);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
    pipeline_.emplace(*manager_, InferPipeline::Options{});
  }

  InferTarget Target(std::string_view model, std::optional<int64_t> version = std::nullopt) {
    InferTarget target;
    target.model_name = model;
    target.model_version = version;
    target.received = std::chrono::steady_clock::now();
    return target;
  }

  // Runs `target` with `decode`; returns what the responder saw once it is final.
  std::shared_ptr<Calls> Run(const InferTarget& target, InferDecoder decode, bool streams = false,
                             absl::Status encode_error = absl::OkStatus()) {
    auto calls = std::make_shared<Calls>();
    pipeline_->Run(target, decode, std::make_unique<FakeResponder>(calls, streams, encode_error));
    calls->AwaitFinal().IgnoreError();
    return calls;
  }

  static absl::StatusOr<InferRequest> SimpleRequest() {
    InferRequest request;
    request.id = "req-1";
    request.inputs.push_back(Int32("INPUT0", {1, 2, 3, 4}, {1, 4}));
    request.inputs.push_back(Int32("INPUT1", {1, 1, 1, 1}, {1, 4}));
    return request;
  }
  static absl::StatusOr<InferRequest> RepeatRequest(std::vector<int32_t> values) {
    InferRequest request;
    const int64_t n = static_cast<int64_t>(values.size());
    request.inputs.push_back(Int32("IN", std::move(values), {n}));
    return request;
  }

  TestModelRepository repo_{"infer_pipeline_test"};
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
  std::optional<InferPipeline> pipeline_;
};

TEST_F(InferPipelineTest, AnUnknownModelIsNotFoundBeforeTheBodyIsRead) {
  bool decoded = false;
  auto calls = Run(Target("nope"), [&](VersionResolver&) -> absl::StatusOr<InferRequest> {
    decoded = true;
    return absl::InvalidArgumentError("malformed");
  });
  EXPECT_EQ(calls->AwaitFinal().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(calls->AwaitFinal().message(), HasSubstr("Request for unknown model: 'nope' is not found"));
  EXPECT_FALSE(decoded);
}

TEST_F(InferPipelineTest, AMalformedVersionOrNameComesFirst) {
  InferTarget target = Target("nope");
  target.model_version = absl::InvalidArgumentError("invalid model version 'x'");
  auto calls = Run(target, [](VersionResolver&) { return SimpleRequest(); });
  EXPECT_THAT(calls->AwaitFinal().message(), HasSubstr("invalid model version"));
  auto unnamed = Run(Target(""), [](VersionResolver&) { return SimpleRequest(); });
  EXPECT_EQ(unnamed->AwaitFinal().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(InferPipelineTest, AMalformedBodyWinsOverAnUnknownVersion) {
  auto malformed = Run(Target("simple", 7),
                       [](VersionResolver&) -> absl::StatusOr<InferRequest> { return absl::InvalidArgumentError("bad json"); });
  EXPECT_EQ(malformed->AwaitFinal().code(), absl::StatusCode::kInvalidArgument);
  auto good = Run(Target("simple", 7), [](VersionResolver&) { return SimpleRequest(); });
  EXPECT_EQ(good->AwaitFinal().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(good->AwaitFinal().message(), HasSubstr("version 7"));
}

TEST_F(InferPipelineTest, SharedMemoryIsBoundBeforeTheVersionIsResolved) {
  // No registry: a request naming a region is InvalidArgument, even for an unknown version.
  auto calls = Run(Target("simple", 7), [](VersionResolver&) {
    absl::StatusOr<InferRequest> request = SimpleRequest();
    RequestedOutput output{"OUTPUT0", {}};
    output.parameters["shared_memory_region"] = std::string("r");
    output.parameters["shared_memory_byte_size"] = int64_t{16};
    request->outputs.push_back(std::move(output));
    return request;
  });
  EXPECT_EQ(calls->AwaitFinal().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(InferPipelineTest, BinaryDataParametersMustBeBooleansWhateverTheTransport) {
  auto request_level = Run(Target("simple"), [](VersionResolver&) {
    absl::StatusOr<InferRequest> request = SimpleRequest();
    request->parameters["binary_data_output"] = std::string("yes");
    return request;
  });
  EXPECT_THAT(request_level->AwaitFinal().message(), HasSubstr("'binary_data_output' must be a bool"));
  auto output_level = Run(Target("simple"), [](VersionResolver&) {
    absl::StatusOr<InferRequest> request = SimpleRequest();
    request->outputs.push_back(RequestedOutput{"OUTPUT0", {{"binary_data", int64_t{1}}}});
    return request;
  });
  EXPECT_THAT(output_level->AwaitFinal().message(), HasSubstr("'binary_data' of output 'OUTPUT0' must be a bool"));
}

TEST_F(InferPipelineTest, ARequestRunsAndIsAnsweredOnce) {
  auto token = std::make_shared<CancellationToken>();
  InferTarget target = Target("simple", 1);
  target.cancellation = token;
  auto calls = Run(target, [](VersionResolver&) { return SimpleRequest(); });
  ASSERT_TRUE(calls->AwaitFinal().ok()) << calls->AwaitFinal();
  absl::MutexLock lock(&calls->mu);
  ASSERT_EQ(calls->encoded.size(), 1u);
  EXPECT_TRUE(calls->encoded[0].first);
  EXPECT_EQ(calls->encoded[0].second, 2u);
  EXPECT_EQ(calls->sent.size(), 1u);
  EXPECT_EQ(calls->request_id, "req-1");
}

TEST_F(InferPipelineTest, ValidationErrorsComeFromTheModelVersion) {
  auto calls = Run(Target("simple"), [](VersionResolver&) {
    absl::StatusOr<InferRequest> request = SimpleRequest();
    request->inputs.pop_back();
    return request;
  });
  EXPECT_EQ(calls->AwaitFinal().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(calls->AwaitFinal().message(), HasSubstr("INPUT1"));
}

TEST_F(InferPipelineTest, ADecoderThatNeedsTheConfigChoosesTheVersionFirst) {
  auto calls = Run(Target("simple"), [](VersionResolver& resolver) -> absl::StatusOr<InferRequest> {
    EXPECT_FALSE(resolver.needs_routing_key());
    absl::StatusOr<const ModelVersion*> version = resolver.Resolve("");
    if (!version.ok()) return version.status();
    EXPECT_EQ((*version)->config().input(0).name(), "INPUT0");
    return SimpleRequest();
  });
  EXPECT_TRUE(calls->AwaitFinal().ok());
  auto unknown = Run(Target("simple", 9), [](VersionResolver& resolver) -> absl::StatusOr<InferRequest> {
    absl::StatusOr<const ModelVersion*> version = resolver.Resolve("");
    if (!version.ok()) return version.status();
    return SimpleRequest();
  });
  EXPECT_EQ(unknown->AwaitFinal().code(), absl::StatusCode::kNotFound);
}

TEST_F(InferPipelineTest, AStreamGetsEveryResponseOfADecoupledModelInOrder) {
  auto calls = Run(Target("repeat_int32"), [](VersionResolver&) { return RepeatRequest({5, 6, 7}); }, true);
  ASSERT_TRUE(calls->AwaitFinal().ok());
  absl::MutexLock lock(&calls->mu);
  ASSERT_EQ(calls->encoded.size(), 4u);  // three responses, then the empty final
  for (int i = 0; i < 3; ++i) EXPECT_EQ(calls->encoded[i], std::make_pair(false, size_t{2}));
  EXPECT_EQ(calls->encoded[3], std::make_pair(true, size_t{0}));
  ASSERT_EQ(calls->sent.size(), 4u);
  EXPECT_TRUE(calls->sent[3].second);
}

TEST_F(InferPipelineTest, AUnaryAnswerTakesADecoupledModelsOnlyResponse) {
  auto one = Run(Target("repeat_int32"), [](VersionResolver&) { return RepeatRequest({5}); });
  ASSERT_TRUE(one->AwaitFinal().ok()) << one->AwaitFinal();
  {
    absl::MutexLock lock(&one->mu);
    ASSERT_EQ(one->encoded.size(), 1u);
    EXPECT_EQ(one->encoded[0], std::make_pair(true, size_t{2}));
  }
  auto two = Run(Target("repeat_int32"), [](VersionResolver&) { return RepeatRequest({5, 6}); });
  EXPECT_EQ(two->AwaitFinal().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(two->AwaitFinal().message(), HasSubstr("generate_stream"));
  auto none = Run(Target("repeat_int32"), [](VersionResolver&) { return RepeatRequest({}); });
  EXPECT_THAT(none->AwaitFinal().message(), HasSubstr("without a response"));
}

TEST_F(InferPipelineTest, AnEncoderErrorFailsTheRequestOnce) {
  auto calls = Run(Target("simple"), [](VersionResolver&) { return SimpleRequest(); }, false,
                   absl::ResourceExhaustedError("too big"));
  EXPECT_EQ(calls->AwaitFinal().code(), absl::StatusCode::kResourceExhausted);
  auto stream = Run(Target("repeat_int32"), [](VersionResolver&) { return RepeatRequest({1, 2, 3}); }, true,
                    absl::InternalError("cannot encode"));
  EXPECT_EQ(stream->AwaitFinal().code(), absl::StatusCode::kInternal);
  absl::MutexLock lock(&stream->mu);
  EXPECT_EQ(stream->sent.size(), 1u);  // the first response's error ends it; the rest are dropped
}

}  // namespace
}  // namespace infera
