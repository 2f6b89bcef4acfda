#include "ensemble/ensemble_scheduler.h"

#include <cstring>
#include <map>

#include "api/parameters.h"
#include "common/str_cat.h"
#include "ensemble/ensemble_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "repository/config_limits.h"

namespace infera {
namespace {

using ::infera::testing::BinaryModel;
using ::infera::testing::Config;
using ::infera::testing::kDiamond;
using ::infera::testing::UnaryModel;
using ::testing::HasSubstr;

Tensor Int32Tensor(const std::string& name, std::vector<int32_t> values) {
  Tensor t;
  t.name = name;
  t.dtype = DataType::kInt32;
  t.shape = {static_cast<int64_t>(values.size())};
  t.data = Buffer::Copy(values.data(), values.size() * sizeof(int32_t));
  return t;
}

std::vector<int32_t> Values(const Tensor& t) {
  std::vector<int32_t> v(t.data.size() / sizeof(int32_t));
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

// A fake step model: answers at once with `compute` of its inputs, or holds the call
// until the test completes it.
struct FakeStep {
  inference::ModelConfig config;
  std::function<absl::StatusOr<std::vector<Tensor>>(const std::vector<Tensor>&)> compute;
  bool hold = false;
  struct Call {
    InferRequest request;
    InferCallback callback;
  };
  std::vector<Call> calls;  // held calls
  int started = 0;
};

FakeStep Step(inference::ModelConfig config,
              std::function<absl::StatusOr<std::vector<Tensor>>(const std::vector<Tensor>&)> compute) {
  FakeStep step;
  step.config = std::move(config);
  step.compute = std::move(compute);
  return step;
}

class EnsembleSchedulerTest : public ::testing::Test {
 protected:
  EnsembleSchedulerTest() {
    // a: +1, b: *2, c: *3, d: A + B. Outputs are new buffers.
    auto unary = [](std::function<int32_t(int32_t)> f) {
      return [f](const std::vector<Tensor>& in) -> absl::StatusOr<std::vector<Tensor>> {
        std::vector<int32_t> v = Values(in[0]);
        for (int32_t& x : v) x = f(x);
        return std::vector<Tensor>{Int32Tensor("OUT", v)};
      };
    };
    steps_["a"] = Step(UnaryModel("a"), unary([](int32_t x) { return x + 1; }));
    steps_["b"] = Step(UnaryModel("b"), unary([](int32_t x) { return x * 2; }));
    steps_["c"] = Step(UnaryModel("c"), unary([](int32_t x) { return x * 3; }));
    steps_["d"] = Step(BinaryModel("d"), [](const std::vector<Tensor>& in) -> absl::StatusOr<std::vector<Tensor>> {
                     std::vector<int32_t> a, b;
                     for (const Tensor& t : in) (t.name == "A" ? a : b) = Values(t);
                     for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
                     return std::vector<Tensor>{Int32Tensor("OUT", a)};
                   });
  }

  StepResolver Resolver() {
    return [this](const std::string& name, std::optional<int64_t>) -> absl::StatusOr<StepModel> {
      auto it = steps_.find(name);
      if (it == steps_.end()) return absl::UnavailableError("model '" + name + "' is not ready");
      FakeStep* step = &it->second;
      StepModel model;
      model.handle = handle_;
      model.config = &step->config;
      model.infer = [step](InferRequest request, InferCallback callback) {
        ++step->started;
        if (step->hold) {
          step->calls.push_back({std::move(request), std::move(callback)});
          return;
        }
        auto out = step->compute(request.inputs);
        if (!out.ok()) {
          callback(out.status(), ResponseDelivery{});
          return;
        }
        InferResponse response;
        response.outputs = std::move(*out);
        callback(std::move(response), ResponseDelivery{});
      };
      return model;
    };
  }

  std::unique_ptr<EnsembleScheduler> Create(const std::string& text = kDiamond) {
    auto scheduler = EnsembleScheduler::Create(Config(text), Resolver());
    EXPECT_TRUE(scheduler.ok()) << scheduler.status();
    return scheduler.ok() ? std::move(*scheduler) : nullptr;
  }

  // Enqueues X = `x`; the result lands in `result`.
  void Enqueue(EnsembleScheduler& scheduler, std::vector<int32_t> x, Parameters parameters = {},
               std::shared_ptr<const CancellationToken> token = nullptr) {
    auto request = std::make_unique<ScheduledRequest>();
    request->request.model_name = "diamond";
    request->request.inputs.push_back(Int32Tensor("X", std::move(x)));
    request->request.parameters = std::move(parameters);
    request->request.arrival_time = std::chrono::steady_clock::now();
    request->request.cancellation = std::move(token);
    request->callback = [this](absl::StatusOr<InferResponse> r, ResponseDelivery) {
      ++answers_;
      result_ = std::move(r);
    };
    scheduler.Enqueue(std::move(request));
  }

  // Completes the first held call of `name` with its compute (or `status`).
  void Complete(const std::string& name, absl::Status status = absl::OkStatus()) {
    FakeStep& step = steps_[name];
    ASSERT_FALSE(step.calls.empty()) << name;
    FakeStep::Call call = std::move(step.calls.front());
    step.calls.erase(step.calls.begin());
    if (!status.ok()) {
      call.callback(status, ResponseDelivery{});
      return;
    }
    InferResponse response;
    response.outputs = *step.compute(call.request.inputs);
    call.callback(std::move(response), ResponseDelivery{});
  }

  std::map<std::string, FakeStep> steps_;
  std::shared_ptr<int> handle_ = std::make_shared<int>(0);
  absl::StatusOr<InferResponse> result_ = absl::UnknownError("no answer");
  int answers_ = 0;
};

TEST_F(EnsembleSchedulerTest, DiamondComputesThroughEveryStep) {
  auto scheduler = Create();
  Enqueue(*scheduler, {1, 2, 3, 4});
  ASSERT_TRUE(result_.ok()) << result_.status();
  ASSERT_EQ(result_->outputs.size(), 1u);
  EXPECT_EQ(result_->outputs[0].name, "Y");
  // (x + 1) * 2 + (x + 1) * 3
  EXPECT_EQ(Values(result_->outputs[0]), (std::vector<int32_t>{10, 15, 20, 25}));
  EXPECT_EQ(scheduler->Active(), 0);
}

TEST_F(EnsembleSchedulerTest, IndependentStepsRunInParallel) {
  for (const char* name : {"a", "b", "c", "d"}) steps_[name].hold = true;
  auto scheduler = Create();
  Enqueue(*scheduler, {1, 1, 1, 1});
  EXPECT_EQ(steps_["a"].started, 1);
  EXPECT_EQ(steps_["b"].started, 0);
  Complete("a");
  // b and c both started before either finished; d waits for both.
  EXPECT_EQ(steps_["b"].calls.size(), 1u);
  EXPECT_EQ(steps_["c"].calls.size(), 1u);
  EXPECT_EQ(steps_["d"].started, 0);
  Complete("c");
  EXPECT_EQ(steps_["d"].started, 0);
  Complete("b");
  EXPECT_EQ(steps_["d"].started, 1);
  EXPECT_EQ(answers_, 0);
  Complete("d");
  ASSERT_TRUE(result_.ok());
  EXPECT_EQ(Values(result_->outputs[0]), (std::vector<int32_t>{10, 10, 10, 10}));
}

TEST_F(EnsembleSchedulerTest, TensorsPassByReference) {
  // Identity steps that rename their inputs: every step and the answer share the bytes.
  const char* text = R"pb(
    name: "chain" platform: "ensemble"
    input [{ name: "X" data_type: TYPE_INT32 dims: [4] }]
    output [{ name: "Y" data_type: TYPE_INT32 dims: [4] }]
    ensemble_scheduling { step [
      { model_name: "a" input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "t" } },
      { model_name: "b" input_map { key: "IN" value: "t" } output_map { key: "OUT" value: "Y" } }
    ] })pb";
  std::vector<const uint8_t*> seen;
  auto identity = [&seen](const std::vector<Tensor>& in) -> absl::StatusOr<std::vector<Tensor>> {
    seen.push_back(in[0].data.data());
    Tensor out = in[0];
    out.name = "OUT";
    return std::vector<Tensor>{out};
  };
  steps_["a"].compute = identity;
  steps_["b"].compute = identity;
  auto scheduler = Create(text);
  Tensor x = Int32Tensor("X", {7, 8, 9, 10});
  const uint8_t* bytes = x.data.data();
  auto request = std::make_unique<ScheduledRequest>();
  request->request.inputs.push_back(x);
  request->request.arrival_time = std::chrono::steady_clock::now();
  request->callback = [this](absl::StatusOr<InferResponse> r, ResponseDelivery) { result_ = std::move(r); };
  scheduler->Enqueue(std::move(request));
  ASSERT_TRUE(result_.ok());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], bytes);
  EXPECT_EQ(seen[1], bytes);
  EXPECT_EQ(result_->outputs[0].data.data(), bytes);
}

TEST_F(EnsembleSchedulerTest, FirstErrorEndsTheRequestNamingTheStepAndCancelsTheRest) {
  for (const char* name : {"a", "b", "c", "d"}) steps_[name].hold = true;
  auto scheduler = Create();
  Enqueue(*scheduler, {1, 1, 1, 1});
  Complete("a");
  Complete("b", absl::InternalError("boom"));
  EXPECT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result_.status().message(), HasSubstr("ensemble 'diamond' step 1 (model 'b'): boom"));
  // c is still running: its request's token says nobody waits; the run holds on.
  ASSERT_EQ(steps_["c"].calls.size(), 1u);
  EXPECT_TRUE(steps_["c"].calls[0].request.cancellation->IsCancelled());
  EXPECT_EQ(scheduler->Active(), 1);
  EXPECT_GT(handle_.use_count(), 1);  // the step handles are held until c finishes
  Complete("c");
  EXPECT_EQ(steps_["d"].started, 0);
  EXPECT_EQ(answers_, 1);
  EXPECT_EQ(scheduler->Active(), 0);
  EXPECT_EQ(handle_.use_count(), 1);
}

TEST_F(EnsembleSchedulerTest, ClientCancellationReachesRunningSteps) {
  for (const char* name : {"a", "b", "c", "d"}) steps_[name].hold = true;
  auto scheduler = Create();
  auto token = std::make_shared<CancellationToken>();
  Enqueue(*scheduler, {1, 1, 1, 1}, {}, token);
  ASSERT_EQ(steps_["a"].calls.size(), 1u);
  EXPECT_FALSE(steps_["a"].calls[0].request.cancellation->IsCancelled());
  token->Cancel();
  EXPECT_TRUE(steps_["a"].calls[0].request.cancellation->IsCancelled());
  // A step that finishes anyway: the next steps are not started.
  Complete("a");
  EXPECT_EQ(steps_["b"].started, 0);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(result_.status().message(), HasSubstr("step 1 (model 'b')"));
  EXPECT_EQ(scheduler->Active(), 0);
}

TEST_F(EnsembleSchedulerTest, ParametersAndRemainingTimeoutReachEachStep) {
  for (const char* name : {"a", "b", "c", "d"}) steps_[name].hold = true;
  auto scheduler = Create();
  Parameters params;
  params["custom"] = std::string("v");
  params["timeout"] = int64_t{10'000'000};
  Enqueue(*scheduler, {1, 1, 1, 1}, params);
  ASSERT_EQ(steps_["a"].calls.size(), 1u);
  const Parameters& seen = steps_["a"].calls[0].request.parameters;
  EXPECT_EQ(GetStringParameter(seen, "custom"), "v");
  auto timeout = GetIntParameter(seen, "timeout");
  ASSERT_TRUE(timeout.has_value());
  EXPECT_GT(*timeout, 0);
  EXPECT_LE(*timeout, 10'000'000);
  Complete("a");
  Complete("b");
  Complete("c");
  Complete("d");
  EXPECT_TRUE(result_.ok());
}

TEST_F(EnsembleSchedulerTest, ExpiredTimeoutFailsTheNextStep) {
  steps_["a"].hold = true;
  auto scheduler = Create();
  auto request = std::make_unique<ScheduledRequest>();
  request->request.inputs.push_back(Int32Tensor("X", {1, 1, 1, 1}));
  request->request.parameters["timeout"] = int64_t{1000};  // 1 ms
  request->request.arrival_time = std::chrono::steady_clock::now();
  request->callback = [this](absl::StatusOr<InferResponse> r, ResponseDelivery) { result_ = std::move(r); };
  const auto arrival = request->request.arrival_time;
  scheduler->Enqueue(std::move(request));
  // Step a "runs" past the deadline; b and c must not start.
  while (std::chrono::steady_clock::now() < arrival + std::chrono::milliseconds(2)) {
  }
  Complete("a");
  EXPECT_EQ(steps_["b"].started + steps_["c"].started, 0);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(result_.status().message(), HasSubstr("step 1 (model 'b'): the request's timeout expired"));
}

TEST_F(EnsembleSchedulerTest, StepNotServingAtRequestTimeNamesTheStep) {
  auto scheduler = Create();
  steps_.erase("c");
  Enqueue(*scheduler, {1, 1, 1, 1});
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(result_.status().message(), HasSubstr("step 2 (model 'c'): model 'c' is not ready"));
  EXPECT_EQ(steps_["a"].started, 0);
}

TEST_F(EnsembleSchedulerTest, ShutdownRejectsNewRequests) {
  auto scheduler = Create();
  scheduler->Shutdown();
  Enqueue(*scheduler, {1, 1, 1, 1});
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(EnsembleSchedulerTest, BadTimeoutParameterIsInvalidArgument) {
  auto scheduler = Create();
  Parameters params;
  params["timeout"] = int64_t{-5};
  Enqueue(*scheduler, {1, 1, 1, 1}, params);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
}

// Triton's rule, as for every other model (RequestQueue::CheckParameterTypes): a timeout
// that is not an integer is refused, not ignored.
TEST_F(EnsembleSchedulerTest, ATimeoutThatIsNotAnIntegerIsInvalidArgument) {
  auto scheduler = Create();
  for (ParameterValue value : {ParameterValue{std::string("100")}, ParameterValue{1e300}, ParameterValue{true}}) {
    Parameters params;
    params["timeout"] = value;
    Enqueue(*scheduler, {1, 1, 1, 1}, params);
    EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(result_.status().message(), HasSubstr("parameter 'timeout' must be an integer"));
  }
}

TEST_F(EnsembleSchedulerTest, AnEnsembleThatReachesItselfAtRequestTimeFailsAtTheDepthBound) {
  // The load-time checks refuse such a graph; here the step resolves to the ensemble
  // itself anyway (as a race between two loads could make it): each step request comes
  // back into Enqueue on the same stack, one level deeper, until the bound.
  const char* text = R"pb(
    name: "loop" platform: "ensemble"
    input [{ name: "X" data_type: TYPE_INT32 dims: [4] }]
    output [{ name: "Y" data_type: TYPE_INT32 dims: [4] }]
    ensemble_scheduling { step [
      { model_name: "a" input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "Y" } }
    ] })pb";
  std::vector<int> depths;
  EnsembleScheduler* self = nullptr;  // set once created
  StepResolver loop = [&](const std::string&, std::optional<int64_t>) -> absl::StatusOr<StepModel> {
    StepModel model;
    model.handle = handle_;
    model.config = &steps_["a"].config;
    model.infer = [&](InferRequest request, InferCallback callback) {
      depths.push_back(request.ensemble_depth);
      auto again = std::make_unique<ScheduledRequest>();
      again->request = std::move(request);
      again->request.inputs[0].name = "X";
      again->callback = std::move(callback);
      self->Enqueue(std::move(again));
    };
    return model;
  };
  auto looping = EnsembleScheduler::Create(Config(text), loop);
  ASSERT_TRUE(looping.ok()) << looping.status();
  self = looping->get();
  Enqueue(**looping, {1, 2, 3, 4});
  EXPECT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(result_.status().message(), HasSubstr("ensemble 'loop' step 0 (model 'a'): ensemble 'loop' step 0"));
  EXPECT_THAT(result_.status().message(), HasSubstr(StrCat("nested more than ", kMaxEnsembleDepth, " ensembles deep")));
  ASSERT_EQ(depths.size(), static_cast<size_t>(kMaxEnsembleDepth));
  EXPECT_EQ(depths.front(), 1);
  EXPECT_EQ(depths.back(), kMaxEnsembleDepth);
  EXPECT_EQ((*looping)->Active(), 0);
}

}  // namespace
}  // namespace infera
