#include "manager/model_manager.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/synchronization/notification.h"
#include "backend/builtin/builtin_backends.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/test_model_repository.h"

namespace infera {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A backend whose instances return a wrong-typed output, or fail, on demand.
class FaultyBackend : public Backend {
 public:
  std::string_view name() const override { return "faulty"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    return std::unique_ptr<LoadedModel>(new Model(context.config->parameters().count("fail") > 0));
  }

 private:
  class Instance : public ModelInstance {
   public:
    explicit Instance(bool fail) : fail_(fail) {}
    absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
      if (fail_) return absl::InternalError("deliberate failure");
      inputs[0].name = "O";
      inputs[0].dtype = DataType::kInt8;  // config says FP32: the core must catch it
      inputs[0].data = Buffer::FromString(std::string(inputs[0].data.size() / 4, '\0'));
      return inputs;
    }
   private:
    bool fail_;
  };
  class Model : public LoadedModel {
   public:
    explicit Model(bool fail) : fail_(fail) {}
    absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
      return std::unique_ptr<ModelInstance>(new Instance(fail_));
    }
   private:
    bool fail_;
  };
};

constexpr char kAddSub[] = R"pb(
  backend: "add_sub" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
  instance_group [ { count: 2 } ]
)pb";

constexpr char kFaulty[] = R"pb(
  backend: "faulty" max_batch_size: 0
  input [ { name: "I" data_type: TYPE_FP32 dims: [ 2 ] } ]
  output [ { name: "O" data_type: TYPE_FP32 dims: [ 2 ] } ]
)pb";

class ModelManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.AddModel("simple", kAddSub, {1, 2});
    repo_.AddModel("all_versions", StrCat(kAddSub, "version_policy { all { } }"), {1, 3});
    repo_.AddModel("bad_syntax", "max_batch_size: [", {1});
    repo_.AddModel("no_versions", kAddSub, {});
    repo_.AddModel("unknown_backend", "backend: \"tensorrt\"", {1});
    repo_.AddModel("wrong_output", kFaulty, {1});
    repo_.AddModel("warmup_fails", StrCat(kFaulty, R"pb(
        parameters { key: "fail" value { string_value: "1" } }
        model_warmup [ { name: "w" inputs { key: "I" value { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } } } ])pb"),
             {1});
    registry_.Register(CreateAddSubBackend());
    registry_.Register(std::make_unique<FaultyBackend>());
    auto manager = ModelManager::Create({repo_.root(), &registry_, 2, 16, 2});
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
    manager_->LoadAll();
  }
  void TearDown() override {
    manager_.reset();
  }
  ModelIndexEntry Find(const std::string& name, std::optional<int64_t> version) {
    for (const auto& e : manager_->Index()) {
      if (e.name == name && e.version == version) return e;
    }
    ADD_FAILURE() << "no index entry for " << name;
    return {};
  }
  // Runs one request synchronously.
  absl::StatusOr<InferResponse> Infer(const std::string& model, InferRequest request) {
    auto version = manager_->GetModelVersion(model, std::nullopt);
    if (!version.ok()) return version.status();
    absl::Notification done;
    absl::StatusOr<InferResponse> result;
    (*version)->Infer(std::move(request), [&](absl::StatusOr<InferResponse> r, ResponseDelivery) {
      result = std::move(r);
      done.Notify();
    });
    done.WaitForNotification();
    return result;
  }

  TestModelRepository repo_{"manager_test"};
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
};

Tensor Int32(const std::string& name, std::vector<int32_t> values) {
  return Tensor{name, DataType::kInt32, {1, static_cast<int64_t>(values.size())},
                Buffer::Copy(values.data(), values.size() * 4)};
}

TEST_F(ModelManagerTest, GoodModelsLoadAndBadOnesFailAlone) {
  EXPECT_EQ(Find("simple", 2).state, ModelState::kReady);
  EXPECT_EQ(Find("all_versions", 1).state, ModelState::kReady);
  EXPECT_EQ(Find("all_versions", 3).state, ModelState::kReady);
  EXPECT_EQ(Find("wrong_output", 1).state, ModelState::kReady);

  ModelIndexEntry syntax = Find("bad_syntax", std::nullopt);
  EXPECT_EQ(syntax.state, ModelState::kUnavailable);
  EXPECT_THAT(syntax.reason, HasSubstr((repo_.root() / "bad_syntax" / "config.pbtxt").string()));
  EXPECT_THAT(Find("no_versions", std::nullopt).reason, HasSubstr("no numbered version folder"));
  EXPECT_THAT(Find("unknown_backend", std::nullopt).reason, HasSubstr("unknown backend 'tensorrt'"));
  ModelIndexEntry warmup = Find("warmup_fails", 1);
  EXPECT_EQ(warmup.state, ModelState::kUnavailable);
  EXPECT_THAT(warmup.reason, HasSubstr("warmup"));
  EXPECT_THAT(warmup.reason, HasSubstr("deliberate failure"));
  EXPECT_FALSE(manager_->AllModelsReady());
}

TEST_F(ModelManagerTest, ResolvesVersionsAndExplainsMisses) {
  EXPECT_EQ((*manager_->GetModelVersion("simple", std::nullopt))->version(), 2);
  EXPECT_EQ((*manager_->GetModelVersion("all_versions", std::nullopt))->version(), 3);
  EXPECT_EQ((*manager_->GetModelVersion("all_versions", 1))->version(), 1);
  EXPECT_THAT(*manager_->ReadyVersions("all_versions"), ::testing::ElementsAre(1, 3));

  auto unknown = manager_->GetModelVersion("nope", std::nullopt);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown.status().message(), "Request for unknown model: 'nope' is not found");
  auto no_version = manager_->GetModelVersion("simple", 1);  // policy serves only 2
  EXPECT_EQ(no_version.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(no_version.status().message()), HasSubstr("Request for unknown model: 'simple' version 1 is not found (versions: 2)"));
  auto broken = manager_->GetModelVersion("bad_syntax", std::nullopt);
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kUnavailable);
  auto failed_version = manager_->GetModelVersion("warmup_fails", 1);
  EXPECT_EQ(failed_version.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(ModelManagerTest, InfersThroughTheSchedulerAndCountsStatistics) {
  InferRequest request;
  request.id = "r1";
  request.inputs = {Int32("INPUT1", {1, 1, 1, 1}), Int32("INPUT0", {5, 6, 7, 8})};
  request.outputs = {{"OUTPUT1", {}}};
  auto response = Infer("simple", std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->id, "r1");
  EXPECT_EQ(response->model_name, "simple");
  EXPECT_EQ(response->model_version, 2);
  ASSERT_EQ(response->outputs.size(), 1u);
  EXPECT_EQ(response->outputs[0].name, "OUTPUT1");
  int32_t diff[4];
  std::memcpy(diff, response->outputs[0].data.data(), 16);
  EXPECT_THAT(diff, ::testing::ElementsAre(4, 5, 6, 7));

  const auto stats = (*manager_->GetModelVersion("simple", 2))->statistics().Snapshot();
  EXPECT_EQ(stats.success.count, 1u);
  EXPECT_EQ(stats.inference_count, 1u);
  EXPECT_EQ(stats.execution_count, 1u);
}

TEST_F(ModelManagerTest, BadRequestsAndBadOutputsFailWithoutHarm) {
  InferRequest bad;
  bad.inputs = {Int32("INPUT0", {1, 2, 3})};
  auto rejected = Infer("simple", std::move(bad));
  EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);

  InferRequest request;
  float values[2] = {1, 2};
  request.inputs = {Tensor{"I", DataType::kFp32, {2}, Buffer::Copy(values, 8)}};
  auto wrong = Infer("wrong_output", std::move(request));
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(wrong.status().message()), HasSubstr("does not match its config"));
  EXPECT_EQ((*manager_->GetModelVersion("simple", 2))->statistics().Snapshot().fail.count, 1u);
}

// Records the thread budget each instance is created with.
class ComputeBackend : public Backend {
 public:
  std::string_view name() const override { return "compute"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override { return absl::OkStatus(); }
  bool UsesIntraOpThreads() const override { return true; }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
    return std::unique_ptr<LoadedModel>(new Model(this));
  }
  std::vector<int> threads;
  absl::Mutex mu;

 private:
  class Model : public LoadedModel {
   public:
    explicit Model(ComputeBackend* backend) : backend_(backend) {}
    absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions& o) override {
      absl::MutexLock lock(&backend_->mu);
      backend_->threads.push_back(o.intra_op_threads);
      return absl::UnimplementedError("only the thread budget is under test");
    }
   private:
    ComputeBackend* backend_;
  };
};

TEST(ModelManagerThreadBudgetTest, CoresAreDividedAmongAllComputeInstances) {
  const fs::path root = fs::temp_directory_path() / StrCat("infera_budget_test_", ::getpid());
  fs::remove_all(root);
  for (const char* name : {"a", "b"}) {
    fs::create_directories(root / name / "1");
    std::ofstream(root / name / "config.pbtxt") << R"pb(backend: "compute"
        input [ { name: "I" data_type: TYPE_FP32 dims: [ 1 ] } ]
        output [ { name: "O" data_type: TYPE_FP32 dims: [ 1 ] } ]
        instance_group [ { count: 2 } ])pb";
  }
  BackendRegistry registry;
  auto backend = std::make_unique<ComputeBackend>();
  ComputeBackend* raw = backend.get();
  registry.Register(std::move(backend));
  auto manager = ModelManager::Create({root, &registry, 8, 16, 2});
  ASSERT_TRUE(manager.ok());
  (*manager)->LoadAll();
  absl::MutexLock lock(&raw->mu);
  // 2 models x 2 instances share 8 cores: 2 threads each (creation fails afterwards,
  // which is fine: only the budget is under test).
  ASSERT_FALSE(raw->threads.empty());
  for (int t : raw->threads) EXPECT_EQ(t, 2);
  fs::remove_all(root);
}

TEST_F(ModelManagerTest, MissingRepositoryIsAnError) {
  EXPECT_EQ(ModelManager::Create({repo_.root() / "missing", &registry_}).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace infera
