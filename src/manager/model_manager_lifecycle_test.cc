// Reload, unload, poll, explicit mode and canary routing of the ModelManager.
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/synchronization/notification.h"
#include "backend/builtin/builtin_backends.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "manager/model_manager.h"

namespace infera {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kIdentity[] = R"pb(
  backend: "identity" max_batch_size: 4
  input [ { name: "I" data_type: TYPE_FP32 dims: [ 2 ] } ]
  output [ { name: "O" data_type: TYPE_FP32 dims: [ 2 ] } ]
)pb";

// Counts CancelOutstandingWork() calls.
struct CancelCount {
  absl::Mutex mu;
  int count ABSL_GUARDED_BY(mu) = 0;
  int Get() {
    absl::MutexLock lock(&mu);
    return count;
  }
};

// The identity model plus work outside its instances (like an LLM's OpenAI streams):
// records when the manager cancels that work.
class StreamingModel : public LoadedModel {
 public:
  StreamingModel(std::unique_ptr<LoadedModel> inner, CancelCount* cancels)
      : inner_(std::move(inner)), cancels_(cancels) {}
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions& options) override {
    return inner_->CreateInstance(options);
  }
  void CancelOutstandingWork() override {
    absl::MutexLock lock(&cancels_->mu);
    ++cancels_->count;
  }

 private:
  std::unique_ptr<LoadedModel> inner_;
  CancelCount* cancels_;
};

class StreamingBackend : public Backend {
 public:
  explicit StreamingBackend(CancelCount* cancels) : identity_(CreateIdentityBackend()), cancels_(cancels) {}
  std::string_view name() const override { return "streaming"; }
  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    return identity_->ValidateConfig(config);
  }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    auto inner = identity_->Load(context);
    if (!inner.ok()) return inner.status();
    return std::make_unique<StreamingModel>(std::move(*inner), cancels_);
  }

 private:
  std::unique_ptr<Backend> identity_;
  CancelCount* cancels_;
};

constexpr char kStreaming[] = R"pb(
  backend: "streaming" max_batch_size: 4
  input [ { name: "I" data_type: TYPE_FP32 dims: [ 2 ] } ]
  output [ { name: "O" data_type: TYPE_FP32 dims: [ 2 ] } ]
)pb";

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / StrCat("infera_lifecycle_", ::getpid(), "_",
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    registry_.Register(CreateIdentityBackend());
    registry_.Register(std::make_unique<StreamingBackend>(&cancels_));
  }
  void TearDown() override {
    manager_.reset();
    fs::remove_all(root_);
  }
  void Write(const std::string& name, const std::string& config, std::vector<int> versions) {
    fs::create_directories(root_ / name);
    std::ofstream(root_ / name / "config.pbtxt") << config;
    for (int v : versions) fs::create_directories(root_ / name / std::to_string(v));
  }
  void Start(ModelControlMode mode = ModelControlMode::kNone, std::vector<std::string> startup = {},
             std::chrono::seconds drain_timeout = std::chrono::seconds(5)) {
    ModelManager::Options options;
    options.repository = root_;
    options.backends = &registry_;
    options.mode = mode;
    options.startup_models = std::move(startup);
    options.drain_timeout = drain_timeout;
    manager_ = std::move(*ModelManager::Create(options));
    manager_->LoadAll();
  }
  int64_t Serving(const std::string& name, std::string_view key = {}) {
    auto version = manager_->GetModelVersion(name, std::nullopt, key);
    return version.ok() ? (*version)->version() : -1;
  }
  std::string ReasonOf(const std::string& name) {
    for (const auto& e : manager_->Index()) {
      if (e.name == name && !e.reason.empty()) return e.reason;
    }
    return "";
  }

  fs::path root_;
  CancelCount cancels_;
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
};

TEST_F(LifecycleTest, PollPicksUpANewVersionAndRetiresTheOld) {
  Write("m", kIdentity, {1});
  Start(ModelControlMode::kPoll);
  EXPECT_EQ(Serving("m"), 1);
  ModelHandle held = *manager_->GetModelVersion("m", 1);  // a request in flight
  fs::create_directories(root_ / "m" / "2");
  std::thread poll([&] { manager_->PollRepository(); });
  // Version 2 starts serving while the poll still waits for the held handle of 1.
  for (int i = 0; i < 1000000 && Serving("m") != 2; ++i) std::this_thread::yield();
  EXPECT_EQ(Serving("m"), 2);
  EXPECT_TRUE(held->QueueDepth() == 0);  // version 1 not drained yet: still usable
  held.reset();
  poll.join();
  EXPECT_EQ(manager_->GetModelVersion("m", 1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(manager_->AllModelsReady());
}

TEST_F(LifecycleTest, UnchangedModelIsNotReloaded) {
  Write("m", kIdentity, {1});
  Start(ModelControlMode::kPoll);
  ModelVersion* before = manager_->GetModelVersion("m", 1)->get();
  manager_->PollRepository();
  EXPECT_EQ(manager_->GetModelVersion("m", 1)->get(), before);
  ASSERT_TRUE(manager_->LoadModel("m").ok());  // explicit reload of an unchanged model
  EXPECT_EQ(manager_->GetModelVersion("m", 1)->get(), before);
}

TEST_F(LifecycleTest, AFailedReloadLeavesTheServingVersionUntouched) {
  Write("m", kIdentity, {1});
  Start(ModelControlMode::kPoll);
  std::ofstream(root_ / "m" / "config.pbtxt") << "backend: \"identity\" max_batch_size: oops";
  manager_->PollRepository();
  EXPECT_EQ(Serving("m"), 1);
  EXPECT_THAT(ReasonOf("m"), HasSubstr("reload failed"));
  EXPECT_THAT(ReasonOf("m"), HasSubstr("config.pbtxt"));
  EXPECT_TRUE(manager_->AllModelsReady());
}

TEST_F(LifecycleTest, ConfigChangeReloadsAndRemovedModelUnloads) {
  Write("m", kIdentity, {1});
  Write("gone", kIdentity, {1});
  Start(ModelControlMode::kPoll);
  ModelVersion* before = manager_->GetModelVersion("m", 1)->get();
  std::ofstream(root_ / "m" / "config.pbtxt") << kIdentity << "instance_group [ { count: 2 } ]";
  fs::remove_all(root_ / "gone");
  manager_->PollRepository();
  EXPECT_NE(manager_->GetModelVersion("m", 1)->get(), before);
  EXPECT_EQ(manager_->GetModelVersion("gone", std::nullopt).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(manager_->AllModelsReady());  // an unloaded model does not count
}

TEST_F(LifecycleTest, ExplicitModeLoadsWhatItIsToldAndUnloads) {
  Write("a", kIdentity, {1});
  Write("b", kIdentity, {1});
  Start(ModelControlMode::kExplicit, {"a"});
  EXPECT_EQ(Serving("a"), 1);
  EXPECT_EQ(manager_->GetModelVersion("b", std::nullopt).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReasonOf("b"), "not loaded");
  ASSERT_TRUE(manager_->LoadModel("b").ok());
  EXPECT_EQ(Serving("b"), 1);
  ASSERT_TRUE(manager_->UnloadModel("a").ok());
  EXPECT_EQ(Serving("a"), -1);
  EXPECT_EQ(manager_->UnloadModel("a").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->LoadModel("../etc").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->LoadModel("nope").code(), absl::StatusCode::kNotFound);
}

TEST_F(LifecycleTest, LoadWithAConfigOverride) {
  Write("m", kIdentity, {1, 2});
  Start(ModelControlMode::kExplicit, {"m"});
  EXPECT_EQ(Serving("m"), 2);
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kIdentity, &config));
  config.mutable_version_policy()->mutable_specific()->add_versions(1);
  ASSERT_TRUE(manager_->LoadModel("m", config).ok());
  EXPECT_EQ(Serving("m"), 1);
}

TEST_F(LifecycleTest, CanaryRoutesStickyByKeyAndExplicitVersionsStillWork) {
  Write("m", std::string(kIdentity) +
                 R"pb(version_policy { specific { versions: [ 1, 2 ] } }
                      parameters { key: "canary.version" value { string_value: "2" } }
                      parameters { key: "canary.weight_percent" value { string_value: "30" } })pb",
        {1, 2});
  Start();
  std::map<int64_t, int> counts;
  for (int user = 0; user < 2000; ++user) {
    const std::string key = StrCat("user", user);
    const int64_t side = Serving("m", key);
    EXPECT_EQ(Serving("m", key), side);  // sticky
    ++counts[side];
  }
  EXPECT_NEAR(counts[2] / 2000.0, 0.30, 0.04);
  EXPECT_EQ((*manager_->GetModelVersion("m", 1, "user1"))->version(), 1);
  ASSERT_EQ(manager_->Canaries().size(), 1u);
  EXPECT_EQ(manager_->Canaries()[0].baseline_version, 1);
  ASSERT_TRUE(manager_->PromoteCanary("m").ok());
  for (int user = 0; user < 50; ++user) EXPECT_EQ(Serving("m", StrCat("user", user)), 2);
  EXPECT_EQ(manager_->PromoteCanary("other").code(), absl::StatusCode::kNotFound);
}

// ChooseVersion: one lookup before the body is decoded, the canary routed after it.
TEST_F(LifecycleTest, ChooseVersionRoutesACanaryOnceTheKeyIsKnown) {
  Write("m", std::string(kIdentity) +
                 R"pb(version_policy { specific { versions: [ 1, 2 ] } }
                      parameters { key: "canary.version" value { string_value: "2" } }
                      parameters { key: "canary.weight_percent" value { string_value: "30" } })pb",
        {1, 2});
  Write("plain", kIdentity, {1, 3});
  Start();
  // An unknown model fails at the lookup; everything else waits for Resolve.
  EXPECT_EQ(manager_->ChooseVersion("nope", std::nullopt).status().code(), absl::StatusCode::kNotFound);
  auto unknown_version = manager_->ChooseVersion("m", 7);
  ASSERT_TRUE(unknown_version.ok()) << unknown_version.status();
  EXPECT_FALSE(unknown_version->needs_routing_key());
  auto missing = std::move(*unknown_version).Resolve("user1");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("version 7 is not found"));

  // Keyed: the side GetModelVersion picks for the same key (sticky).
  for (int user = 0; user < 200; ++user) {
    const std::string key = StrCat("user", user);
    auto choice = manager_->ChooseVersion("m", std::nullopt);
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_TRUE(choice->needs_routing_key());
    auto chosen = std::move(*choice).Resolve(key);
    ASSERT_TRUE(chosen.ok()) << chosen.status();
    EXPECT_EQ((*chosen)->version(), Serving("m", key)) << key;
  }
  // Unkeyed: the exact spread, 30 of every 100 consecutive requests, as GetModelVersion.
  int to_canary = 0;
  for (int i = 0; i < 100; ++i) {
    auto chosen = (*manager_->ChooseVersion("m", std::nullopt)).Resolve("");
    ASSERT_TRUE(chosen.ok()) << chosen.status();
    to_canary += (*chosen)->version() == 2;
  }
  EXPECT_EQ(to_canary, 30);

  // The choice holds both sides while pending; Resolve keeps only the chosen one's handle.
  ModelHandle v1 = *manager_->GetModelVersion("m", 1);
  ModelHandle v2 = *manager_->GetModelVersion("m", 2);
  {
    auto choice = manager_->ChooseVersion("m", std::nullopt);
    ASSERT_TRUE(choice.ok());
    EXPECT_EQ(v1->NumHandles(), 2);
    EXPECT_EQ(v2->NumHandles(), 2);
    auto chosen = std::move(*choice).Resolve("user1");
    ASSERT_TRUE(chosen.ok());
    const int64_t side = (*chosen)->version();
    EXPECT_EQ(v1->NumHandles(), side == 1 ? 2 : 1);
    EXPECT_EQ(v2->NumHandles(), side == 2 ? 2 : 1);
  }
  EXPECT_EQ(v1->NumHandles(), 1);
  EXPECT_EQ(v2->NumHandles(), 1);

  // An explicit version, or a model without a canary: settled at the lookup, key ignored.
  auto explicit_version = manager_->ChooseVersion("m", 1);
  ASSERT_TRUE(explicit_version.ok());
  EXPECT_FALSE(explicit_version->needs_routing_key());
  EXPECT_EQ((*std::move(*explicit_version).Resolve("user1"))->version(), 1);
  auto plain = manager_->ChooseVersion("plain", std::nullopt);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->needs_routing_key());
  EXPECT_EQ((*std::move(*plain).Resolve(""))->version(), 3);
}

TEST_F(LifecycleTest, RefusedApiLoadsLeaveTheServerReady) {
  Write("a", kIdentity, {1});
  Write("b", kIdentity, {1});
  Start(ModelControlMode::kExplicit, {"a"});
  ASSERT_TRUE(manager_->AllModelsReady());
  // A name the repository lacks: 404, and readiness is untouched.
  EXPECT_EQ(manager_->LoadModel("nope").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(manager_->AllModelsReady());
  // A hostile override: 400 naming the field, and nothing changes.
  inference::ModelConfig hostile;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      std::string(kIdentity) + "dynamic_batching { priority_levels: 1000000 }", &hostile));
  absl::Status refused = manager_->LoadModel("b", hostile);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("priority_levels"));
  EXPECT_TRUE(manager_->AllModelsReady());
  EXPECT_EQ(ReasonOf("b"), "not loaded");
  EXPECT_EQ(manager_->LoadModel("a", hostile).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Serving("a"), 1);
  EXPECT_TRUE(manager_->AllModelsReady());
}

TEST_F(LifecycleTest, AStartupModelMissingFromTheRepositoryMakesTheServerNotReady) {
  Write("a", kIdentity, {1});
  Start(ModelControlMode::kExplicit, {"a", "missing"});
  EXPECT_EQ(Serving("a"), 1);
  EXPECT_FALSE(manager_->AllModelsReady());
  EXPECT_THAT(ReasonOf("missing"), HasSubstr("not in the repository"));
}

// Each lookup is a counted handle; an unload waits for every one (on a condition) before
// it shuts the version down, and the version keeps serving its holders meanwhile.
TEST_F(LifecycleTest, UnloadWaitsForEveryHandle) {
  Write("m", kStreaming, {1});
  Start(ModelControlMode::kExplicit, {"m"}, std::chrono::seconds(300));
  ModelHandle held = *manager_->GetModelVersion("m", std::nullopt);
  EXPECT_EQ(held->NumHandles(), 1);
  {
    ModelHandle copy = held;  // a copy shares the handle
    EXPECT_EQ(held->NumHandles(), 1);
    auto other = manager_->GetModelVersion("m", 1);
    EXPECT_EQ(held->NumHandles(), 2);
  }
  EXPECT_EQ(held->NumHandles(), 1);
  EXPECT_FALSE(held->AwaitNoHandles(absl::Now()));
  absl::Notification unloaded;
  std::thread unload([&] {
    EXPECT_TRUE(manager_->UnloadModel("m").ok());
    unloaded.Notify();
  });
  for (int i = 0; i < 1000000 && Serving("m") != -1; ++i) std::this_thread::yield();
  EXPECT_EQ(Serving("m"), -1);  // no longer routed to
  EXPECT_FALSE(unloaded.HasBeenNotified());  // but not drained while a handle is held
  absl::Notification answered;
  held->Infer(InferRequest{}, [&](absl::StatusOr<InferResponse>, ResponseDelivery) { answered.Notify(); });
  answered.WaitForNotification();
  held.reset();
  unload.join();
  EXPECT_EQ(cancels_.Get(), 0);  // drained in time: nothing cancelled
}

// A handle held past the drain timeout (a stream longer than the timeout): the manager
// cancels the model's outstanding work, which lets the handle go, and the unload ends.
TEST_F(LifecycleTest, DrainTimeoutCancelsOutstandingWork) {
  Write("m", kStreaming, {1});
  Start(ModelControlMode::kExplicit, {"m"}, std::chrono::seconds(1));
  ModelHandle held = *manager_->GetModelVersion("m", std::nullopt);
  std::thread stream([&] {
    absl::MutexLock lock(&cancels_.mu);
    cancels_.mu.Await(absl::Condition(
        +[](CancelCount* c) ABSL_NO_THREAD_SAFETY_ANALYSIS { return c->count > 0; }, &cancels_));
    held.reset();
  });
  EXPECT_TRUE(manager_->UnloadModel("m").ok());
  EXPECT_EQ(cancels_.Get(), 1);
  stream.join();
}

// At shutdown the frontends have drained already: UnloadAll does not wait again (by
// default), it cancels what still holds a handle and unloads.
TEST_F(LifecycleTest, UnloadAllCancelsWhatIsStillHeld) {
  Write("m", kStreaming, {1});
  Start(ModelControlMode::kNone, {}, std::chrono::seconds(300));
  ModelHandle held = *manager_->GetModelVersion("m", std::nullopt);
  manager_->UnloadAll();  // returns although a handle is held
  EXPECT_EQ(cancels_.Get(), 1);
  EXPECT_EQ(manager_->GetModelVersion("m", std::nullopt).status().code(), absl::StatusCode::kUnavailable);
  held.reset();  // the last reference, released after the version's threads are done
}

}  // namespace
}  // namespace infera
