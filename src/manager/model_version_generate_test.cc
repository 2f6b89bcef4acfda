// ModelVersion::Generate, the one path of a text generation (docs/request_path.md): the
// typed capability query, validation, statistics, the handle held until the final output
// whichever of admission and final output comes last, and snapshots.
#include <filesystem>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "manager/model_version.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

// A text generator whose Generate() parks the request for the test to answer by hand.
class FakeGenerator : public LoadedModel, public TextGenerator {
 public:
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    class NoOp : public ModelInstance {
      absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor>, const ExecutionContext&) override {
        return absl::InternalError("unused");
      }
    };
    return std::unique_ptr<ModelInstance>(new NoOp);
  }
  TextGenerator* text_generator() override { return this; }
  const std::string& name() const override { return name_; }
  int64_t max_model_len() const override { return 128; }
  int64_t created_unix_seconds() const override { return 1; }
  std::string_view TokenBytes(int32_t) const override { return "x"; }
  GenerationMetrics Metrics() const override {
    GenerationMetrics m;
    m.generation_tokens = 42;
    m.max_num_seqs = 7;
    return m;
  }
  void Generate(GenerationRequest request, GenerationCallbacks callbacks) override {
    absl::MutexLock lock(&mu);
    parked.emplace(std::move(request), std::move(callbacks));
  }

  absl::Mutex mu;
  std::optional<std::pair<GenerationRequest, GenerationCallbacks>> parked ABSL_GUARDED_BY(mu);

 private:
  std::string name_ = "llm";
};

class GeneratorBackend : public Backend {
 public:
  std::string_view name() const override { return "fake_llm"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override { return absl::OkStatus(); }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
    auto model = std::make_unique<FakeGenerator>();
    loaded = model.get();
    return std::unique_ptr<LoadedModel>(std::move(model));
  }
  FakeGenerator* loaded = nullptr;
};

class GenerateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = std::make_shared<inference::ModelConfig>();
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"pb(name: "llm" backend: "fake_llm" instance_group [ { count: 1 kind: KIND_CPU } ])pb", config.get()));
    ModelVersion::Options options;
    options.config = config;
    options.version = 1;
    options.model_dir = std::filesystem::temp_directory_path();
    options.backend = &backend_;
    auto version = ModelVersion::Load(std::move(options));
    ASSERT_TRUE(version.ok()) << version.status();
    version_ = *version;
  }
  // Takes the request the fake parked.
  std::pair<GenerationRequest, GenerationCallbacks> Parked() {
    absl::MutexLock lock(&backend_.loaded->mu);
    EXPECT_TRUE(backend_.loaded->parked.has_value());
    auto parked = std::move(*backend_.loaded->parked);
    backend_.loaded->parked.reset();
    return parked;
  }

  GeneratorBackend backend_;
  std::shared_ptr<ModelVersion> version_;
};

GenerationRequest Prompt() {
  GenerationRequest request;
  request.prompt_text = "hello";
  request.arrival_time = std::chrono::steady_clock::now();
  return request;
}

TEST_F(GenerateTest, TheCapabilityIsATypedQuery) {
  EXPECT_EQ(version_->text_generator(), backend_.loaded);
  const ModelVersionSnapshot snapshot = version_->Snapshot();
  ASSERT_TRUE(snapshot.generation.has_value());
  EXPECT_EQ(snapshot.generation->generation_tokens, 42u);
  EXPECT_EQ(snapshot.generation->max_num_seqs, 7);
  EXPECT_EQ(snapshot.name, "llm");
}

TEST_F(GenerateTest, InvalidSamplingIsRefusedByTheVersionAndCounted) {
  GenerationRequest request = Prompt();
  request.sampling.top_p = 0;
  std::optional<absl::Status> admitted;
  version_->Generate(std::move(request), {[&](absl::Status s, std::string) { admitted = s; },
                                          [](GenerationOutput) { FAIL() << "no output after a refusal"; }});
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(admitted->code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(admitted->message(), HasSubstr("top_p"));
  EXPECT_EQ(version_->statistics().Snapshot().failures.bad_request, 1u);
  EXPECT_EQ(version_->NumHandles(), 0);
}

// The final output may come before the admission (they arrive on different threads): the
// request ends, and its handle goes, only once both have been delivered.
TEST_F(GenerateTest, HeldUntilBothAdmissionAndFinalOutputWereDelivered) {
  int outputs = 0;
  std::optional<absl::Status> admitted;
  version_->Generate(Prompt(), {[&](absl::Status s, std::string) { admitted = s; },
                                [&](GenerationOutput) { ++outputs; }});
  auto [request, callbacks] = Parked();
  EXPECT_EQ(version_->NumHandles(), 1);
  EXPECT_EQ(version_->InFlight(), 1);
  GenerationOutput partial;
  partial.text = "a";
  callbacks.output(partial);
  GenerationOutput last;
  last.finish_reason = FinishReason::kStop;
  last.timings.scheduled = request.arrival_time + std::chrono::milliseconds(2);
  callbacks.output(last);  // before the admission
  EXPECT_EQ(outputs, 2);
  EXPECT_EQ(version_->NumHandles(), 1);  // the admission is still to come
  callbacks.admitted(absl::OkStatus(), "");
  EXPECT_TRUE(admitted.has_value() && admitted->ok());
  EXPECT_EQ(version_->NumHandles(), 0);
  EXPECT_EQ(version_->InFlight(), 0);
  const StatisticsSnapshot stats = version_->statistics().Snapshot();
  EXPECT_EQ(stats.success.count, 1u);
  EXPECT_EQ(stats.execution_count, 1u);
  EXPECT_GE(stats.queue.ns, 2'000'000u);  // arrival → first scheduled
}

// A generator that reports no time points still gets a complete trace and statistics:
// the first engine step from its queue time, the first token when it passed by.
TEST_F(GenerateTest, TimingsTheGeneratorLeavesUnsetAreFilledIn) {
  std::optional<GenerationTimings> timings;
  GenerationRequest prompt = Prompt();
  prompt.arrival_time -= std::chrono::milliseconds(50);  // read 50 ms ago, scheduled 3 ms after
  version_->Generate(std::move(prompt), {[](absl::Status, std::string) {},
                                         [&](GenerationOutput o) {
                                           if (o.finish_reason != FinishReason::kNone) timings = o.timings;
                                         }});
  auto [request, callbacks] = Parked();
  callbacks.admitted(absl::OkStatus(), "");
  GenerationOutput no_token;  // e.g. an empty first chunk
  callbacks.output(no_token);
  const auto before_first = std::chrono::steady_clock::now();
  GenerationOutput first;
  first.token_ids = {7};
  first.queue_seconds = 0.003;
  callbacks.output(first);
  const auto after_first = std::chrono::steady_clock::now();
  GenerationOutput last;
  last.token_ids = {8};
  last.queue_seconds = 0.003;
  last.finish_reason = FinishReason::kLength;
  callbacks.output(last);
  ASSERT_TRUE(timings.has_value());
  EXPECT_EQ(timings->arrival, request.arrival_time);
  EXPECT_EQ(timings->scheduled, request.arrival_time + std::chrono::milliseconds(3));
  EXPECT_GE(timings->first_token, before_first);
  EXPECT_LE(timings->first_token, after_first);
  EXPECT_GE(timings->finished, after_first);
  const StatisticsSnapshot stats = version_->statistics().Snapshot();
  EXPECT_EQ(stats.queue.ns, 3'000'000u);
  EXPECT_EQ(stats.compute_infer.count, 1u);
  EXPECT_EQ(stats.compute_infer.ns,
            static_cast<uint64_t>(std::chrono::nanoseconds(timings->finished - timings->scheduled).count()));
}

// What the generator reports wins.
TEST_F(GenerateTest, ReportedTimingsAreKept) {
  std::optional<GenerationTimings> timings;
  version_->Generate(Prompt(), {[](absl::Status, std::string) {},
                                [&](GenerationOutput o) {
                                  if (o.finish_reason != FinishReason::kNone) timings = o.timings;
                                }});
  auto [request, callbacks] = Parked();
  callbacks.admitted(absl::OkStatus(), "");
  GenerationOutput last;
  last.token_ids = {8};
  last.queue_seconds = 1.0;
  last.finish_reason = FinishReason::kStop;
  const auto t0 = request.arrival_time;
  last.timings = {t0, t0 + std::chrono::milliseconds(1), t0 + std::chrono::milliseconds(2),
                  t0 + std::chrono::milliseconds(4), t0 + std::chrono::milliseconds(9), std::chrono::microseconds(5)};
  callbacks.output(last);
  ASSERT_TRUE(timings.has_value());
  EXPECT_EQ(timings->scheduled, t0 + std::chrono::milliseconds(2));
  EXPECT_EQ(timings->first_token, t0 + std::chrono::milliseconds(4));
  EXPECT_EQ(timings->finished, t0 + std::chrono::milliseconds(9));
  EXPECT_EQ(version_->statistics().Snapshot().queue.ns, 2'000'000u);
}

TEST_F(GenerateTest, AnAbortedGenerationCountsAsCancelled) {
  version_->Generate(Prompt(), {[](absl::Status, std::string) {}, [](GenerationOutput) {}});
  auto [request, callbacks] = Parked();
  callbacks.admitted(absl::OkStatus(), "");
  GenerationOutput last;
  last.finish_reason = FinishReason::kAbort;
  callbacks.output(last);
  EXPECT_EQ(version_->statistics().Snapshot().failures.cancelled, 1u);
  EXPECT_EQ(version_->NumHandles(), 0);
}

TEST_F(GenerateTest, AModelThatGeneratesNoTextRefusesGenerate) {
  class PlainBackend : public Backend {
    std::string_view name() const override { return "plain"; }
    absl::Status ValidateConfig(const inference::ModelConfig&) const override { return absl::OkStatus(); }
    absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
      // A LoadedModel that is no text generator (its instances are never used here).
      class Plain : public FakeGenerator {
       public:
        TextGenerator* text_generator() override { return nullptr; }
      };
      return std::unique_ptr<LoadedModel>(new Plain);
    }
  } plain;
  auto config = std::make_shared<inference::ModelConfig>();
  config->set_name("plain");
  config->add_instance_group()->set_count(1);
  ModelVersion::Options options;
  options.config = config;
  options.version = 1;
  options.backend = &plain;
  auto version = ModelVersion::Load(std::move(options));
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ((*version)->text_generator(), nullptr);
  std::optional<absl::Status> admitted;
  (*version)->Generate(Prompt(), {[&](absl::Status s, std::string) { admitted = s; }, [](GenerationOutput) {}});
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(admitted->code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(admitted->message(), HasSubstr("does not generate text"));
}

}  // namespace
}  // namespace infera
