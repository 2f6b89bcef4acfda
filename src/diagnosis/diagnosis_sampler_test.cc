#include "diagnosis/diagnosis_sampler.h"

#include "backend/backend_registry.h"
#include "backend/builtin/builtin_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/test_model_repository.h"

namespace infera::diagnosis {
namespace {

constexpr char kConfig[] = R"(
name: "m"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
)";

// An ensemble of "m" and "slow" (both identity), for the slowest-step verdict.
constexpr char kSlowConfig[] = R"(
name: "slow"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
)";
constexpr char kEnsembleConfig[] = R"(
name: "pipeline"
platform: "ensemble"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
ensemble_scheduling { step [
  { model_name: "m" model_version: -1 input_map { key: "INPUT0" value: "INPUT0" }
    output_map { key: "OUTPUT0" value: "middle" } },
  { model_name: "slow" model_version: -1 input_map { key: "INPUT0" value: "middle" }
    output_map { key: "OUTPUT0" value: "OUTPUT0" } } ] }
)";

class DiagnosisSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.Register(CreateIdentityBackend());
    repo_.AddModel("m", kConfig);
    repo_.AddModel("slow", kSlowConfig);
    repo_.AddModel("pipeline", kEnsembleConfig);
    auto manager = repo_.Load(&registry_);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
  }
  void Record(int requests, const std::string& model = "m", uint64_t request_ns = 1'000'000,
              uint64_t queue_ns = 800'000) {
    auto version = manager_->GetModelVersion(model, std::nullopt);
    ASSERT_TRUE(version.ok());
    // The test stands in for the request path (which records through ModelVersion itself):
    // fixed durations make the diagnosis predictable.
    auto& statistics = const_cast<ModelStatistics&>((*version)->statistics());
    for (int i = 0; i < requests; ++i) {
      statistics.RecordExecution(1, 1, 0, request_ns - queue_ns, 0);
      statistics.RecordSuccess(request_ns, queue_ns, 1);
    }
  }

  BackendRegistry registry_;
  TestModelRepository repo_{"diagnosis_sampler_test"};
  std::unique_ptr<ModelManager> manager_;
};

// A version not sampled yet is summarised from zero at its counters' creation; once
// sampled, the zero sample in front of its ring keeps its whole life in the window.
TEST_F(DiagnosisSamplerTest, WindowCoversTheVersionsLifeUntilTheRingIsOlder) {
  DiagnosisSampler sampler(*manager_, {std::chrono::milliseconds(1000), 301, false, nullptr});
  Record(25);
  auto first = sampler.Diagnose("m", std::nullopt, 60);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->model, "m");
  EXPECT_EQ(first->version, 1);
  EXPECT_EQ(first->window.requests, 25u);
  EXPECT_EQ(first->window.instances, 2u);
  // 0.8 ms of 1 ms queued without dynamic batching: waiting for an instance.
  EXPECT_EQ(first->diagnosis.bottleneck_class, "queueing");
  sampler.SampleAll();
  Record(5);
  auto second = sampler.Diagnose("m", 1, 60);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->window.requests, 30u);
  EXPECT_GT(second->window.seconds, 0.0);
  EXPECT_LE(second->window.seconds, 60.0);
}

// An ensemble is judged by its slowest step, each step diagnosed over the same window.
TEST_F(DiagnosisSamplerTest, EnsembleIsJudgedByItsSlowestStep) {
  DiagnosisSampler sampler(*manager_, {std::chrono::milliseconds(1000), 301, false, nullptr});
  Record(30, "pipeline", 12'000'000, 0);
  Record(30, "m", 2'000'000, 0);
  Record(30, "slow", 9'000'000, 0);  // all compute
  auto answer = sampler.Diagnose("pipeline", std::nullopt, 60);
  ASSERT_TRUE(answer.ok()) << answer.status();
  const Diagnosis& d = answer->diagnosis;
  EXPECT_EQ(d.slowest_step, "slow");
  EXPECT_EQ(d.bottleneck_class, "compute_bound");
  EXPECT_THAT(d.summary, ::testing::HasSubstr("the slowest step is 'slow' (9.0 ms of the pipeline's 12.0 ms"));
  ASSERT_EQ(d.steps.size(), 2u);
  EXPECT_EQ(d.steps[0].model, "m");
  EXPECT_EQ(d.steps[1].requests, 30u);
}

TEST_F(DiagnosisSamplerTest, ErrorsNameTheProblem) {
  DiagnosisSampler sampler(*manager_, {std::chrono::milliseconds(1000), 301, false, nullptr});
  auto unknown = sampler.Diagnose("nope", std::nullopt, 60);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(sampler.Diagnose("m", 7, 60).status().code(), absl::StatusCode::kNotFound);
  for (int window : {0, -1, kMaxWindowSeconds + 1}) {
    auto bad = sampler.Diagnose("m", std::nullopt, window);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("window"));
  }
}

// The thread samples, and the destructor stops and joins it promptly.
TEST_F(DiagnosisSamplerTest, ThreadStartsAndStops) {
  DiagnosisSampler::Options options;
  options.period = std::chrono::milliseconds(5);
  int probes = 0;
  absl::Mutex mu;
  options.after_pass = [&] {
    absl::MutexLock lock(&mu);
    ++probes;
  };
  DiagnosisSampler sampler(*manager_, options);
  absl::MutexLock lock(&mu);
  // Three passes of the thread (a hang here fails the test by its timeout).
  mu.Await(absl::Condition(+[](int* n) { return *n >= 3; }, &probes));
}  // the destructor joins the thread while it waits for its next pass

}  // namespace
}  // namespace infera::diagnosis
