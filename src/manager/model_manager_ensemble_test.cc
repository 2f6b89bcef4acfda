// The ModelManager with ensembles over the built-in backends in a temporary repository:
// loading order, explicit mode loading the steps, nested cycles, zero copy end to end
// through real identity models, statistics, and a step unloaded and loaded again.
#include <cstring>

#include "absl/synchronization/notification.h"
#include "backend/builtin/builtin_backends.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/model_manager.h"
#include "manager/test_model_repository.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

constexpr char kIdentity[] = R"pb(
  backend: "identity" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
)pb";
constexpr char kAddSub[] = R"pb(
  backend: "add_sub" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
)pb";

std::string Ensemble(const std::string& steps) {
  return StrCat(R"pb(platform: "ensemble" max_batch_size: 4
    input [ { name: "X" data_type: TYPE_INT32 dims: [ 4 ] } ]
    output [ { name: "Y" data_type: TYPE_INT32 dims: [ 4 ] } ]
    ensemble_scheduling { step [ )pb",
                steps, " ] }");
}

// "aa_chain" sorts before its steps: it must still load after them.
const std::string kChain = Ensemble(R"pb(
    { model_name: "zz_first" model_version: -1 input_map { key: "INPUT0" value: "X" } output_map { key: "OUTPUT0" value: "m" } },
    { model_name: "zz_second" model_version: -1 input_map { key: "INPUT0" value: "m" } output_map { key: "OUTPUT0" value: "Y" } })pb");
// Y = X + X via add_sub, after an identity.
const std::string kDouble = Ensemble(R"pb(
    { model_name: "zz_first" input_map { key: "INPUT0" value: "X" } output_map { key: "OUTPUT0" value: "m" } },
    { model_name: "zz_add" input_map { key: "INPUT0" value: "m" } input_map { key: "INPUT1" value: "X" }
      output_map { key: "OUTPUT0" value: "Y" } })pb");

class ModelManagerEnsembleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.AddModel("zz_first", kIdentity);
    repo_.AddModel("zz_second", kIdentity);
    repo_.AddModel("zz_add", kAddSub);
    repo_.AddModel("aa_chain", kChain);
    repo_.AddModel("double", kDouble);
    repo_.AddModel("loop_a", Ensemble(R"pb({ model_name: "loop_b" input_map { key: "X" value: "X" } output_map { key: "Y" value: "Y" } })pb"));
    repo_.AddModel("loop_b", Ensemble(R"pb({ model_name: "loop_a" input_map { key: "X" value: "X" } output_map { key: "Y" value: "Y" } })pb"));
    repo_.AddModel("outer", Ensemble(R"pb({ model_name: "aa_chain" input_map { key: "X" value: "X" } output_map { key: "Y" value: "Y" } })pb"));
    registry_.Register(CreateIdentityBackend());
    registry_.Register(CreateAddSubBackend());
  }
  void TearDown() override {
    if (manager_) manager_->UnloadAll();
    manager_.reset();
  }
  void Start(ModelControlMode mode, std::vector<std::string> startup = {}) {
    ModelManager::Options options{repo_.root(), &registry_, 2, 16, 2};
    options.mode = mode;
    options.startup_models = std::move(startup);
    auto manager = ModelManager::Create(std::move(options));
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
    manager_->LoadAll();
  }
  ModelIndexEntry Find(const std::string& name) {
    ModelIndexEntry found;
    for (const auto& e : manager_->Index()) {
      if (e.name == name) found = e;
    }
    return found;
  }
  absl::StatusOr<InferResponse> Infer(const std::string& model, Tensor x) {
    auto version = manager_->GetModelVersion(model, std::nullopt);
    if (!version.ok()) return version.status();
    InferRequest request;
    request.model_name = model;
    request.inputs.push_back(std::move(x));
    request.arrival_time = std::chrono::steady_clock::now();
    absl::Notification done;
    absl::StatusOr<InferResponse> result;
    (*version)->Infer(std::move(request), [&](absl::StatusOr<InferResponse> r, ResponseDelivery) {
      result = std::move(r);
      done.Notify();
    });
    done.WaitForNotification();
    return result;
  }

  TestModelRepository repo_{"manager_ensemble_test"};
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
};

Tensor Int32(const std::string& name, std::vector<int32_t> values) {
  return Tensor{name, DataType::kInt32, {1, static_cast<int64_t>(values.size())},
                Buffer::Copy(values.data(), values.size() * 4)};
}

std::vector<int32_t> Values(const Tensor& t) {
  std::vector<int32_t> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

TEST_F(ModelManagerEnsembleTest, EnsemblesLoadAfterTheirStepsAndComputeThroughThem) {
  Start(ModelControlMode::kNone);
  EXPECT_EQ(Find("aa_chain").state, ModelState::kReady) << Find("aa_chain").reason;
  auto response = Infer("double", Int32("X", {1, 2, 3, -4}));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->model_name, "double");
  ASSERT_EQ(response->outputs.size(), 1u);
  EXPECT_EQ(Values(response->outputs[0]), (std::vector<int32_t>{2, 4, 6, -8}));
}

TEST_F(ModelManagerEnsembleTest, TensorsPassWithoutCopiesThroughRealSteps) {
  Start(ModelControlMode::kNone);
  Tensor x = Int32("X", {7, 8, 9, 10});
  const uint8_t* bytes = x.data.data();
  auto response = Infer("aa_chain", x);
  ASSERT_TRUE(response.ok()) << response.status();
  // Two identity steps, each through its own queue and instance: the same bytes.
  EXPECT_EQ(response->outputs[0].data.data(), bytes);
  EXPECT_EQ(Values(response->outputs[0]), (std::vector<int32_t>{7, 8, 9, 10}));
}

TEST_F(ModelManagerEnsembleTest, StatisticsForTheWholeAndForEachStep) {
  Start(ModelControlMode::kNone);
  ASSERT_TRUE(Infer("aa_chain", Int32("X", {1, 1, 1, 1})).ok());
  ASSERT_TRUE(Infer("aa_chain", Int32("X", {1, 1, 1, 1})).ok());
  auto ensemble = manager_->GetModelVersion("aa_chain", std::nullopt);
  auto step = manager_->GetModelVersion("zz_second", std::nullopt);
  ASSERT_TRUE(ensemble.ok() && step.ok());
  StatisticsSnapshot whole = (*ensemble)->statistics().Snapshot();
  EXPECT_EQ(whole.success.count, 2u);
  EXPECT_EQ(whole.queue.ns, 0u);
  EXPECT_EQ(whole.execution_count, 2u);
  EXPECT_EQ((*step)->statistics().Snapshot().success.count, 2u);
}

TEST_F(ModelManagerEnsembleTest, AnEnsembleStepMayBeAnEnsemble) {
  Start(ModelControlMode::kExplicit, {"outer"});  // loads aa_chain, which loads its steps
  Tensor x = Int32("X", {3, 1, 4, 1});
  const uint8_t* bytes = x.data.data();
  auto response = Infer("outer", x);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->model_name, "outer");
  EXPECT_EQ(response->outputs[0].data.data(), bytes);
  EXPECT_EQ(response->timings.batch_requests, 1);
  EXPECT_GE(response->timings.execution_end, response->timings.execution_start);
}

TEST_F(ModelManagerEnsembleTest, NestedEnsemblesThatReachThemselvesFailToLoad) {
  Start(ModelControlMode::kNone);
  EXPECT_EQ(Find("loop_a").state, ModelState::kUnavailable);
  EXPECT_THAT(Find("loop_a").reason, HasSubstr("leads back to ensemble"));
  EXPECT_THAT(Find("loop_b").reason, HasSubstr("leads back to ensemble"));
  EXPECT_EQ(Find("double").state, ModelState::kReady);
}

TEST_F(ModelManagerEnsembleTest, ExplicitLoadOfAnEnsembleLoadsItsSteps) {
  Start(ModelControlMode::kExplicit, {"double"});
  EXPECT_EQ(Find("double").state, ModelState::kReady) << Find("double").reason;
  EXPECT_EQ(Find("zz_first").state, ModelState::kReady);
  EXPECT_EQ(Find("zz_add").state, ModelState::kReady);
  EXPECT_NE(Find("zz_second").state, ModelState::kReady);  // not a step of "double"
  EXPECT_TRUE(manager_->AllModelsReady());
}

TEST_F(ModelManagerEnsembleTest, UnloadedStepFailsRequestsNamingItUntilLoadedAgain) {
  Start(ModelControlMode::kExplicit, {"aa_chain"});
  ASSERT_TRUE(manager_->UnloadModel("zz_second").ok());
  auto failed = Infer("aa_chain", Int32("X", {1, 1, 1, 1}));
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(failed.status().message(), HasSubstr("ensemble 'aa_chain' step 1 (model 'zz_second')"));
  ASSERT_TRUE(manager_->LoadModel("zz_second").ok());
  EXPECT_TRUE(Infer("aa_chain", Int32("X", {1, 1, 1, 1})).ok());
}

TEST_F(ModelManagerEnsembleTest, AnEnsembleWhoseStepIsMissingFailsNamingTheStep) {
  repo_.AddModel("broken", Ensemble(R"pb({ model_name: "not_here" input_map { key: "INPUT0" value: "X" } output_map { key: "OUTPUT0" value: "Y" } })pb"));
  Start(ModelControlMode::kNone);
  EXPECT_EQ(Find("broken").state, ModelState::kUnavailable);
  EXPECT_THAT(Find("broken").reason, HasSubstr("ensemble 'broken' step 0 (model 'not_here'): Request for unknown model: 'not_here' is not found"));
}

}  // namespace
}  // namespace infera
