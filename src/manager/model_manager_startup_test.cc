// ModelManager::LoadAll as the server's start-up runs it (docs/cold_start.md): the
// real manager over a temporary repository with the built-in backends, plus a probe
// backend (identity models that count what runs at once) for the order and the cap.
#include <fstream>
#include <map>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "backend/builtin/builtin_backends.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/model_manager.h"
#include "manager/test_model_repository.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What the probe saw: loads in order, and how many loads / instance runs overlapped.
struct ProbeLog {
  absl::Mutex mu;
  std::vector<std::string> order ABSL_GUARDED_BY(mu);
  int loading ABSL_GUARDED_BY(mu) = 0;
  int max_loading ABSL_GUARDED_BY(mu) = 0;
  int executing ABSL_GUARDED_BY(mu) = 0;
  int max_executing ABSL_GUARDED_BY(mu) = 0;
  int busy ABSL_GUARDED_BY(mu) = 0;  // loads + warm-up runs
  int max_busy ABSL_GUARDED_BY(mu) = 0;
  // Each load / warm-up run waits (at most 10 s) until this many run at once, the first
  // time, so that a cap is reached rather than missed by luck.
  int overlap = 1;
  bool load_met ABSL_GUARDED_BY(mu) = false;
  bool execute_met ABSL_GUARDED_BY(mu) = false;
};

class ProbeInstance : public ModelInstance {
 public:
  explicit ProbeInstance(ProbeLog* log, std::vector<std::string> outputs) : log_(log), outputs_(std::move(outputs)) {}
  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    {
      absl::MutexLock lock(&log_->mu);
      log_->max_executing = std::max(log_->max_executing, ++log_->executing);
      log_->max_busy = std::max(log_->max_busy, ++log_->busy);
      log_->mu.AwaitWithTimeout(
          absl::Condition(+[](ProbeLog* l) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return l->execute_met || l->executing >= l->overlap;
          }, log_),
          absl::Seconds(10));
      log_->execute_met = true;
      --log_->executing;
      --log_->busy;
    }
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i].name = outputs_[i];
    return inputs;
  }

 private:
  ProbeLog* log_;
  std::vector<std::string> outputs_;
};

class ProbeModel : public LoadedModel {
 public:
  ProbeModel(ProbeLog* log, const inference::ModelConfig& config) : log_(log) {
    for (const auto& o : config.output()) outputs_.push_back(o.name());
  }
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<ProbeInstance>(log_, outputs_);
  }

 private:
  ProbeLog* log_;
  std::vector<std::string> outputs_;
};

class ProbeBackend : public Backend {
 public:
  explicit ProbeBackend(ProbeLog* log) : log_(log) {}
  std::string_view name() const override { return "probe"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override { return absl::OkStatus(); }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    absl::MutexLock lock(&log_->mu);
    log_->order.push_back(context.config->name());
    log_->max_loading = std::max(log_->max_loading, ++log_->loading);
    log_->max_busy = std::max(log_->max_busy, ++log_->busy);
    log_->mu.AwaitWithTimeout(
        absl::Condition(+[](ProbeLog* l) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return l->load_met || l->loading >= l->overlap;
        }, log_),
        absl::Seconds(10));
    log_->load_met = true;
    --log_->loading;
    --log_->busy;
    if (context.timings != nullptr) context.timings->AddStage("probe", std::chrono::milliseconds(0));
    return std::make_unique<ProbeModel>(log_, *context.config);
  }

 private:
  ProbeLog* log_;
};

std::string ProbeConfig(const std::string& name, int instances, bool warmup) {
  return StrCat("name: \"", name, "\" backend: \"probe\" max_batch_size: 4\n",
                "input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ 2 ] } ]\n",
                "output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ 2 ] } ]\n",
                "instance_group [ { count: ", instances, " } ]\n",
                warmup ? "model_warmup [ { name: \"w\" batch_size: 1 inputs { key: \"INPUT0\" value { "
                         "data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } } } ]\n"
                       : "");
}

constexpr char kIdentity[] = R"pb(
  backend: "identity" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
)pb";
// Warm-up that fails: every execution of this fault_injection model fails.
constexpr char kFailingWarmup[] = R"pb(
  backend: "fault_injection" max_batch_size: 4
  input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
  instance_group [ { count: 3 } ]
  parameters { key: "failure_rate" value { string_value: "1" } }
  model_warmup [ { name: "sample" batch_size: 1
                   inputs { key: "INPUT0" value { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } } } ]
)pb";
// A config the add_sub backend refuses (one input).
constexpr char kBadConfig[] = R"pb(
  backend: "add_sub" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
)pb";
const std::string kChain = R"pb(platform: "ensemble" max_batch_size: 4
    input [ { name: "X" data_type: TYPE_INT32 dims: [ 4 ] } ]
    output [ { name: "Y" data_type: TYPE_INT32 dims: [ 4 ] } ]
    ensemble_scheduling { step [
    { model_name: "zz_first" model_version: -1 input_map { key: "INPUT0" value: "X" } output_map { key: "OUTPUT0" value: "m" } },
    { model_name: "zz_second" model_version: -1 input_map { key: "INPUT0" value: "m" } output_map { key: "OUTPUT0" value: "Y" } } ] })pb";

class StartupTest : public ::testing::Test {
 protected:
  StartupTest() {
    registry_.Register(CreateIdentityBackend());
    registry_.Register(CreateAddSubBackend());
    registry_.Register(CreateFaultInjectionBackend());
    registry_.Register(std::make_unique<ProbeBackend>(&log_));
  }
  std::unique_ptr<ModelManager> Start(int threads, ModelManager::StartupLoads* loads = nullptr) {
    ModelManager::Options options;
    options.repository = repo_.root();
    options.backends = &registry_;
    options.num_cores = 2;
    options.max_parallel_loads = threads;
    auto manager = ModelManager::Create(std::move(options));
    EXPECT_TRUE(manager.ok()) << manager.status();
    ModelManager::StartupLoads result = (*manager)->LoadAll();
    if (loads != nullptr) *loads = std::move(result);
    return std::move(*manager);
  }
  // Writes `bytes` bytes into the model's version 1 folder (the start-up order's measure).
  void AddBytes(const std::string& model, size_t bytes) {
    std::ofstream(repo_.root() / model / "1" / "weights.bin") << std::string(bytes, 'x');
  }

  TestModelRepository repo_{"manager_startup_test"};
  BackendRegistry registry_;
  ProbeLog log_;
};

std::vector<std::string> Describe(const ModelManager& manager) {
  std::vector<std::string> rows;
  for (const ModelIndexEntry& e : manager.Index()) {
    rows.push_back(StrCat(e.name, " v", e.version.value_or(-1), " ", ModelStateName(e.state), " ", e.reason));
  }
  return rows;
}

TEST_F(StartupTest, ParallelLoadsEndInTheSameStatesAndMessagesAsOneThread) {
  repo_.AddModel("zz_first", kIdentity);
  repo_.AddModel("zz_second", kIdentity);
  repo_.AddModel("aa_chain", kChain);  // sorts before its steps; loads after them
  repo_.AddModel("bad_config", kBadConfig);
  repo_.AddModel("bad_warmup", kFailingWarmup);
  repo_.AddModel("fine", ProbeConfig("fine", 2, true));
  std::vector<std::string> sequential, parallel;
  {
    auto manager = Start(1);
    sequential = Describe(*manager);
    manager->UnloadAll();
  }
  ModelManager::StartupLoads loads;
  auto manager = Start(4, &loads);
  parallel = Describe(*manager);
  EXPECT_EQ(parallel, sequential);
  // Failures stay with their model; the others serve, the ensemble included.
  std::map<std::string, ModelIndexEntry> by_name;
  for (const auto& e : manager->Index()) by_name[e.name] = e;
  EXPECT_EQ(by_name["aa_chain"].state, ModelState::kReady);
  EXPECT_EQ(by_name["fine"].state, ModelState::kReady);
  EXPECT_EQ(by_name["zz_first"].state, ModelState::kReady);
  EXPECT_EQ(by_name["bad_config"].state, ModelState::kUnavailable);
  EXPECT_THAT(by_name["bad_config"].reason, HasSubstr("add_sub"));
  EXPECT_EQ(by_name["bad_warmup"].state, ModelState::kUnavailable);
  EXPECT_THAT(by_name["bad_warmup"].reason,
              HasSubstr("model 'bad_warmup' version 1: warmup sample 'sample' failed: fault_injection: injected failure"));
  EXPECT_FALSE(manager->AllModelsReady());
  // The records: every version that got as far as loading, the ensemble last.
  EXPECT_EQ(loads.threads, 4);
  ASSERT_EQ(loads.versions.size(), 5u);  // bad_config fails before it has versions
  EXPECT_EQ(loads.versions.back().model, "aa_chain");
  EXPECT_TRUE(loads.versions.back().ensemble);
  for (const auto& v : loads.versions) {
    EXPECT_EQ(v.ok, v.model != "bad_warmup") << v.model;
    EXPECT_LE(v.start, v.end) << v.model;
    EXPECT_LE(v.end, loads.wall) << v.model;
  }
  ASSERT_NE(loads.CriticalPath(), nullptr);
  EXPECT_FALSE(loads.CriticalPath()->ensemble);
  manager->UnloadAll();
}

TEST_F(StartupTest, LargestModelLoadsFirst) {
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, size_t>>{
           {"a_small", 10}, {"b_large", 30000}, {"c_none", 0}, {"d_medium", 2000}}) {
    repo_.AddModel(name, ProbeConfig(name, 1, false));
    if (bytes > 0) AddBytes(name, bytes);
  }
  auto manager = Start(1);
  absl::MutexLock lock(&log_.mu);
  EXPECT_THAT(log_.order, ElementsAre("b_large", "d_medium", "a_small", "c_none"));
}

TEST_F(StartupTest, LoadsAndWarmUpsShareTheThreadCap) {
  log_.overlap = 2;
  for (int i = 0; i < 6; ++i) repo_.AddModel(StrCat("m", i), ProbeConfig(StrCat("m", i), 3, true));
  ModelManager::StartupLoads loads;
  auto manager = Start(2, &loads);
  EXPECT_TRUE(manager->AllModelsReady());
  {
    absl::MutexLock lock(&log_.mu);
    EXPECT_EQ(log_.order.size(), 6u);
    EXPECT_EQ(log_.max_loading, 2);    // two models at once ...
    EXPECT_EQ(log_.max_executing, 2);  // ... and a model's instances warmed two at a time
    EXPECT_EQ(log_.max_busy, 2);       // never more than the cap in all
  }
  ASSERT_EQ(loads.versions.size(), 6u);
  for (const auto& v : loads.versions) {
    EXPECT_EQ(v.timings.instances.size(), 3u);
    EXPECT_EQ(v.timings.instance_threads, 2);
    EXPECT_THAT(v.timings.Describe(), HasSubstr("probe 0 ms, 3 instances: create "));
  }
  manager->UnloadAll();
}

TEST_F(StartupTest, OneThreadWarmsInstancesOneAfterTheOther) {
  for (int i = 0; i < 2; ++i) repo_.AddModel(StrCat("m", i), ProbeConfig(StrCat("m", i), 3, true));
  ModelManager::StartupLoads loads;
  auto manager = Start(1, &loads);
  EXPECT_TRUE(manager->AllModelsReady());
  absl::MutexLock lock(&log_.mu);
  EXPECT_EQ(log_.max_busy, 1);
  manager->UnloadAll();
}

}  // namespace
}  // namespace infera
