// The `llm` backend's two request paths on a fake model runner: its decoupled instance
// (Triton's vLLM-backend tensors, what KServe infer / generate / ModelStreamInfer reach)
// and TextGenerator::Generate (what ModelVersion::Generate calls for the OpenAI routes).
#include "llm/llm_backend.h"

#include <optional>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "llm/test_tokenizers.h"

namespace infera::llm {
namespace {

// Next token: (last input token + 1) mod 256. Records which requests each step ran,
// and can hold its steps until the test opens the gate.
class GatedRunner : public ModelRunner {
 public:
  absl::StatusOr<ModelRunnerOutput> Execute(const SchedulerOutput& step) override {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&open_));
    for (const auto& seq : step.sequences) seen_.insert({seq.request_id, phase_});
    ModelRunnerOutput out;
    out.vocab_size = vocab_size();
    for (const auto& seq : step.sequences) {
      for (int64_t k = seq.NumLogitsRows(); k > 0; --k) {  // with draft tokens: one row per position
        std::vector<float> row(out.vocab_size, 0.0f);
        row[(seq.token_ids[seq.token_ids.size() - static_cast<size_t>(k)] + 1) % 256] = 10.0f;
        out.logits.insert(out.logits.end(), row.begin(), row.end());
      }
    }
    return out;
  }
  int64_t vocab_size() const override { return 300; }

  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  void set_phase(int phase) {
    absl::MutexLock lock(&mu_);
    phase_ = phase;
  }
  // Requests that ran in a step during `phase`.
  std::set<RequestId> RanIn(int phase) {
    absl::MutexLock lock(&mu_);
    std::set<RequestId> ids;
    for (const auto& [id, p] : seen_) {
      if (p == phase) ids.insert(id);
    }
    return ids;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  int phase_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<std::pair<RequestId, int>> seen_ ABSL_GUARDED_BY(mu_);
};

constexpr int64_t kMaxModelLen = 64;

class LlmBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tokenizer = Tokenizer::FromJson(testing::SentencePieceTokenizerJson());
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    model_ = std::make_unique<LlmModel>("tiny", std::move(*tokenizer),
                                        absl::FailedPreconditionError("the model has no chat template"),
                                        /*batched=*/false);
    EngineOptions o;
    o.num_blocks = 64;
    o.block_size = 4;
    o.scheduler.max_model_len = kMaxModelLen;
    o.scheduler.max_num_batched_tokens = 64;
    o.scheduler.eos_token_ids = {2};
    auto runner = std::make_unique<GatedRunner>();
    runner_ = runner.get();
    auto engine = LlmEngine::Create(o, std::move(runner), &model_->tokenizer());
    ASSERT_TRUE(engine.ok()) << engine.status();
    model_->set_engine(std::move(*engine));
  }

  static Tensor Prompts(const std::vector<std::string>& prompts) {
    std::string data;
    for (const std::string& p : prompts) AppendBytesElement(data, p);
    Tensor t;
    t.name = "text_input";
    t.dtype = DataType::kBytes;
    t.shape = {static_cast<int64_t>(prompts.size())};
    t.data = Buffer::FromString(std::move(data));
    return t;
  }
  static Tensor Sampling(const std::string& json) {
    std::string data;
    AppendBytesElement(data, json);
    Tensor t;
    t.name = "sampling_parameters";
    t.dtype = DataType::kBytes;
    t.shape = {1};
    t.data = Buffer::FromString(std::move(data));
    return t;
  }
  // Its size alone shows it is past the context (the tokenizer: at most 8 bytes a token).
  static std::string TooLong() {
    std::string text;
    for (int i = 0; i < kMaxModelLen * 2; ++i) text += "hello ";
    return text;
  }
  // 28 ids ("<s>" and 27 "▁hello"), but only 161 bytes: its size passes a budget of 24
  // (at least 22 ids), its tokenisation does not.
  static std::string TooLongOnceTokenised() {
    std::string text;
    for (int i = 0; i < 27; ++i) text += "hello ";
    return text.substr(0, text.size() - 1);
  }

  // Runs one request straight on the engine and waits for its end: every request the
  // engine still held runs in the same or earlier steps.
  void RunSentinel() {
    GenerateRequest r;
    r.prompt_token_ids = model_->tokenizer().Encode("world", true);
    r.sampling.max_tokens = 2;
    r.sampling.ignore_eos = true;
    absl::Notification done;
    ASSERT_TRUE(model_->engine()
                    .AddRequest(std::move(r),
                                [&](RequestOutput o) {
                                  if (o.finish_reason != FinishReason::kNone) done.Notify();
                                })
                    .ok());
    done.WaitForNotification();
  }

  std::unique_ptr<LlmModel> model_;
  GatedRunner* runner_ = nullptr;
};

// What the model version would get from the decoupled instance, on the LLM's threads.
class RecordingSink : public ResponseSink {
 public:
  absl::Status Send(std::vector<Tensor> outputs, bool final) override {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> texts;
    const auto elements = SplitBytesElements(outputs.at(0).data.AsStringView());
    EXPECT_TRUE(elements.ok()) << elements.status();
    for (std::string_view e : *elements) texts.emplace_back(e);
    responses_.push_back(std::move(texts));
    ended_ = ended_ || final;
    return absl::OkStatus();
  }
  void Finish(absl::Status status) override {
    absl::MutexLock lock(&mu_);
    finish_ = std::move(status);
    ended_ = true;
  }
  void SetGenerationTimings(const GenerationTimings& t) override {
    absl::MutexLock lock(&mu_);
    timings_ = t;
  }
  bool IsStopped() const override { return false; }

  // Waits for the final response (or Finish); returns every response's texts and the
  // Finish status (OK when the last response was final).
  std::pair<std::vector<std::vector<std::string>>, absl::Status> AwaitEnd() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&ended_));
    return {responses_, finish_};
  }
  std::optional<GenerationTimings> timings() {
    absl::MutexLock lock(&mu_);
    return timings_;
  }

 private:
  absl::Mutex mu_;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::vector<std::string>> responses_ ABSL_GUARDED_BY(mu_);
  absl::Status finish_ ABSL_GUARDED_BY(mu_);
  std::optional<GenerationTimings> timings_ ABSL_GUARDED_BY(mu_);
};

// One request through the model's (decoupled) instance; its responses go to `sink`.
void Submit(LlmModel& model, std::vector<Tensor> inputs, std::shared_ptr<RecordingSink> sink,
            std::shared_ptr<const CancellationToken> cancel = nullptr) {
  auto instance = model.CreateInstance(InstanceOptions{});
  ASSERT_TRUE(instance.ok());
  static const Parameters kNoParameters;
  std::vector<ModelInstance::DecoupledRequest> requests;
  requests.push_back({std::move(inputs), RequestContext{&kNoParameters, std::move(cancel), std::nullopt, 1},
                      ResponseSender(std::move(sink))});
  (*instance)->ExecuteDecoupled(std::move(requests));  // returns at once
}

TEST(LlmBackendRegistrationTest, TheBackendIsAlwaysDecoupled) {
  std::unique_ptr<Backend> backend = CreateLlmBackend();
  EXPECT_TRUE(backend->SupportsDecoupled());
  EXPECT_TRUE(backend->AlwaysDecoupled());
}

// A failed first prompt answers the request; the prompts after it are refused on the
// prompt worker (their cancellation fired), so none of them ever reaches the engine.
TEST_F(LlmBackendTest, ABatchWithAFailedFirstPromptIsAnsweredAndNothingOfItRuns) {
  auto sink = std::make_shared<RecordingSink>();
  std::vector<Tensor> inputs;
  inputs.push_back(Prompts({TooLong(), "hello", "hello world"}));
  inputs.push_back(Sampling(R"({"max_tokens": 8, "ignore_eos": true})"));
  Submit(*model_, std::move(inputs), sink);
  const auto [responses, status] = sink->AwaitEnd();
  EXPECT_TRUE(responses.empty());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("maximum context length is 64"), std::string::npos) << status;
  runner_->set_phase(1);
  runner_->Open();
  RunSentinel();
  EXPECT_EQ(runner_->RanIn(1).size(), 1u) << "prompts of the failed request ran";
}

// A failure in the middle of a batch is the answer; what was already generating is
// cancelled and dropped by the engine within a step (not run to its 40 tokens).
TEST_F(LlmBackendTest, ABatchFailureInTheMiddleCancelsTheSubmittedPrompts) {
  auto sink = std::make_shared<RecordingSink>();
  std::vector<Tensor> inputs;
  inputs.push_back(Prompts({"hello", "hello world", TooLongOnceTokenised(), "world"}));
  inputs.push_back(Sampling(R"({"max_tokens": 40, "ignore_eos": true})"));
  Submit(*model_, std::move(inputs), sink);
  const auto [responses, status] = sink->AwaitEnd();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  runner_->Open();
  RunSentinel();  // 2 tokens
  const GenerationMetrics m = model_->Metrics();
  EXPECT_EQ(m.requests_aborted, 2u);
  EXPECT_LE(m.generation_tokens, 2u + 2u) << "cancelled prompts went on generating";
}

// Issue 26 finding 5: a text_input of tens of MB is refused from its size (no tokenising),
// and the request's other prompts are cancelled with it.
TEST_F(LlmBackendTest, KServeRefusesAHugePromptFromItsSize) {
  auto sink = std::make_shared<RecordingSink>();
  std::vector<Tensor> inputs;
  inputs.push_back(Prompts({"hello", std::string(size_t{40} << 20, 'x')}));
  Submit(*model_, std::move(inputs), sink);
  const auto [responses, status] = sink->AwaitEnd();
  EXPECT_TRUE(responses.empty());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("maximum context length is 64 tokens (max_model_len)"), std::string::npos)
      << status;
  EXPECT_NE(status.message().find("The prompt is at least 41943040 bytes"), std::string::npos) << status;
  runner_->Open();
  RunSentinel();
}

TEST_F(LlmBackendTest, ABatchIsOneResponseOfEveryText) {
  runner_->Open();
  auto sink = std::make_shared<RecordingSink>();
  std::vector<Tensor> inputs;
  inputs.push_back(Prompts({"hello", "world"}));
  inputs.push_back(Sampling(R"({"max_tokens": 3, "ignore_eos": true})"));
  Submit(*model_, std::move(inputs), sink);
  const auto [responses, status] = sink->AwaitEnd();
  EXPECT_TRUE(status.ok()) << status;
  ASSERT_EQ(responses.size(), 1u);
  ASSERT_EQ(responses[0].size(), 2u);
  EXPECT_TRUE(responses[0][0].starts_with("hello"));
  EXPECT_TRUE(responses[0][1].starts_with("world"));
  ASSERT_TRUE(sink->timings().has_value());
  EXPECT_NE(sink->timings()->first_token, std::chrono::steady_clock::time_point{});
}

TEST_F(LlmBackendTest, AStreamIsOneResponsePerPieceOfTextFromTheEngine) {
  runner_->Open();
  auto sink = std::make_shared<RecordingSink>();
  std::vector<Tensor> inputs;
  inputs.push_back(Prompts({"hello"}));
  inputs.push_back(Sampling(R"({"max_tokens": 4, "ignore_eos": true})"));
  Tensor stream;
  stream.name = "stream";
  stream.dtype = DataType::kBool;
  stream.shape = {1};
  stream.data = Buffer::FromString(std::string(1, '\1'));
  inputs.push_back(std::move(stream));
  Submit(*model_, std::move(inputs), sink);
  const auto [responses, status] = sink->AwaitEnd();
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_GE(responses.size(), 1u);
  EXPECT_LE(responses.size(), 4u);
  for (const auto& r : responses) {
    ASSERT_EQ(r.size(), 1u);
    EXPECT_FALSE(r[0].empty());
  }
}

// The client goes away while the request generates: the engine drops it, the request
// ends Cancelled.
TEST_F(LlmBackendTest, AClientThatLeavesEndsTheGeneration) {
  auto sink = std::make_shared<RecordingSink>();
  auto client = std::make_shared<CancellationToken>();
  std::vector<Tensor> inputs;
  inputs.push_back(Prompts({"hello"}));
  inputs.push_back(Sampling(R"({"max_tokens": 50, "ignore_eos": true})"));
  Submit(*model_, std::move(inputs), sink, client);
  client->Cancel();
  runner_->Open();
  const auto [responses, status] = sink->AwaitEnd();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_TRUE(responses.empty());
  EXPECT_LE(model_->Metrics().generation_tokens, 1u);
}

struct Admission {
  absl::Mutex mu;
  bool admitted ABSL_GUARDED_BY(mu) = false;
  absl::Status status ABSL_GUARDED_BY(mu);
  std::string echo ABSL_GUARDED_BY(mu);
  std::thread::id thread ABSL_GUARDED_BY(mu);
  bool finished ABSL_GUARDED_BY(mu) = false;
  int outputs ABSL_GUARDED_BY(mu) = 0;
  FinishReason reason ABSL_GUARDED_BY(mu) = FinishReason::kNone;

  GenerationAdmitted OnAdmitted() {
    return [this](absl::Status s, std::string e) {
      absl::MutexLock lock(&mu);
      admitted = true;
      status = std::move(s);
      echo = std::move(e);
      thread = std::this_thread::get_id();
    };
  }
  GenerationOutputCallback OnOutput() {
    return [this](GenerationOutput o) {
      absl::MutexLock lock(&mu);
      ++outputs;
      if (o.finish_reason != FinishReason::kNone) {
        finished = true;
        reason = o.finish_reason;
      }
    };
  }
  void AwaitAdmitted() {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&admitted));
  }
  void AwaitFinished() {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&finished));
  }
};

TEST_F(LlmBackendTest, GenerateTokenisesOnTheWorkerAndStreams) {
  runner_->Open();
  Admission a;
  GenerationRequest r;
  r.prompt_text = "hello world";
  r.echo = true;
  r.sampling.max_tokens = 4;
  r.sampling.ignore_eos = true;
  model_->Generate(std::move(r), {a.OnAdmitted(), a.OnOutput()});
  a.AwaitAdmitted();
  a.AwaitFinished();
  absl::MutexLock lock(&a.mu);
  EXPECT_TRUE(a.status.ok()) << a.status;
  EXPECT_EQ(a.echo, "hello world");
  EXPECT_NE(a.thread, std::this_thread::get_id());
  EXPECT_EQ(a.reason, FinishReason::kLength);
  EXPECT_EQ(a.outputs, 4);
}

TEST_F(LlmBackendTest, GenerateRefusesAPromptBeyondMaxModelLenNamingTheLimit) {
  Admission a;
  GenerationRequest r;
  r.prompt_text = TooLong();
  model_->Generate(std::move(r), {a.OnAdmitted(), a.OnOutput()});
  a.AwaitAdmitted();
  absl::MutexLock lock(&a.mu);
  EXPECT_EQ(a.status.code(), absl::StatusCode::kInvalidArgument) << a.status;
  EXPECT_NE(a.status.message().find("max_model_len"), std::string::npos) << a.status;
  EXPECT_NE(a.status.message().find("64"), std::string::npos) << a.status;
  EXPECT_EQ(a.outputs, 0);
}

// Issue 26 finding 5: a prompt of tens of MB used to be tokenised (seconds of the
// prompt worker, holding every prompt queued behind it) before the refusal. Its size
// alone now refuses it, inside Generate, on the caller's thread: no queue, no tokenising.
TEST_F(LlmBackendTest, GenerateRefusesAHugePromptOnTheCallersThreadBeforeQueueing) {
  for (int kind = 0; kind < 3; ++kind) {
    Admission a;
    GenerationRequest r;
    if (kind == 0) r.prompt_text = std::string(size_t{60} << 20, 'x');
    if (kind == 1) r.messages = std::vector<ChatMessage>{{"system", "s"}, {"user", std::string(size_t{60} << 20, 'x')}};
    if (kind == 2) r.prompt_ids.assign(size_t{4} << 20, 5);
    r.echo = true;  // token ids: the echo's Decode must not run either
    r.max_tokens_set = kind != 1;
    model_->Generate(std::move(r), {a.OnAdmitted(), a.OnOutput()});
    absl::MutexLock lock(&a.mu);
    ASSERT_TRUE(a.admitted) << "kind " << kind << ": not answered inside Generate";
    EXPECT_EQ(a.thread, std::this_thread::get_id());
    EXPECT_EQ(a.status.code(), absl::StatusCode::kInvalidArgument) << a.status;
    EXPECT_NE(a.status.message().find("maximum context length is 64 tokens (max_model_len)"), std::string::npos)
        << a.status;
    EXPECT_NE(a.status.message().find(kind == 2 ? "4194304 in the prompt" : "at least"), std::string::npos)
        << a.status;
  }
}

// Past the budget but not by its size: tokenised on the worker, which stops at the
// budget and refuses it.
TEST_F(LlmBackendTest, GenerateRefusesAPromptThatTokenisesPastTheBudget) {
  Admission a;
  GenerationRequest r;
  r.prompt_text = TooLongOnceTokenised();
  r.sampling.max_tokens = 40;
  model_->Generate(std::move(r), {a.OnAdmitted(), a.OnOutput()});
  a.AwaitAdmitted();
  absl::MutexLock lock(&a.mu);
  EXPECT_NE(a.thread, std::this_thread::get_id());
  EXPECT_EQ(a.status.code(), absl::StatusCode::kInvalidArgument) << a.status;
  EXPECT_NE(a.status.message().find("you requested at least 65 tokens (at least 25 in the prompt, 40 in the "
                                    "completion)"),
            std::string::npos)
      << a.status;
}

TEST_F(LlmBackendTest, LogitBiasOutsideTheVocabularyIsRefusedInVllmWords) {
  Admission a;
  GenerationRequest r;
  r.prompt_text = "hello";
  r.sampling.logit_bias = {{5, 1.0f}, {300, 1.0f}, {-1, 2.0f}};
  model_->Generate(std::move(r), {a.OnAdmitted(), a.OnOutput()});
  a.AwaitAdmitted();
  absl::MutexLock lock(&a.mu);
  EXPECT_EQ(a.status.code(), absl::StatusCode::kInvalidArgument) << a.status;
  EXPECT_EQ(a.status.message(),
            "token_id(s) [300, -1] in logit_bias contain out-of-vocab token ids. Vocabulary size: 300");
}

TEST_F(LlmBackendTest, GenerateChatWithoutATemplateIsInvalid) {
  Admission a;
  GenerationRequest r;
  r.messages = std::vector<ChatMessage>{{"user", "hello"}};
  model_->Generate(std::move(r), {a.OnAdmitted(), a.OnOutput()});
  a.AwaitAdmitted();
  absl::MutexLock lock(&a.mu);
  EXPECT_EQ(a.status.code(), absl::StatusCode::kInvalidArgument) << a.status;
  EXPECT_NE(a.status.message().find("no chat template"), std::string::npos) << a.status;
}

// A retiring version whose drain time is over: queued prompts are refused, running
// generations end with an abort, so every caller gets its answer.
TEST_F(LlmBackendTest, CancelOutstandingWorkAnswersEveryCaller) {
  Admission running;
  GenerationRequest r;
  r.prompt_text = "hello";
  r.sampling.max_tokens = 50;
  r.sampling.ignore_eos = true;
  model_->Generate(std::move(r), {running.OnAdmitted(), running.OnOutput()});
  running.AwaitAdmitted();  // queued on the engine; its first step waits at the gate
  std::thread cancel([&] { model_->CancelOutstandingWork(); });
  // Open the gate once the engine refuses new work (it is stopping): the generation
  // cannot have run to its length by then.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    GenerateRequest probe;
    probe.prompt_token_ids = {260};
    if (model_->engine().AddRequest(std::move(probe), [](RequestOutput) {}).code() ==
        absl::StatusCode::kUnavailable) {
      break;
    }
    std::this_thread::yield();
  }
  runner_->Open();
  cancel.join();
  running.AwaitFinished();
  {
    absl::MutexLock lock(&running.mu);
    EXPECT_EQ(running.reason, FinishReason::kAbort);
  }
  Admission late;
  GenerationRequest again;
  again.prompt_text = "hello";
  model_->Generate(std::move(again), {late.OnAdmitted(), late.OnOutput()});
  late.AwaitAdmitted();
  absl::MutexLock lock(&late.mu);
  EXPECT_EQ(late.status.code(), absl::StatusCode::kUnavailable) << late.status;
}

}  // namespace
}  // namespace infera::llm
