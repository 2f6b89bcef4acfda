// The llm backend's decoupled instance on a fake TextGenerator (the test plays the engine's
// outputs) and a fake response sink (what the model version would deliver).
#include "llm/llm_tensor_instance.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "api/token_meter.h"
#include "llm/test_tensors.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using TimePoint = std::chrono::steady_clock::time_point;

// Records each Generate() call; the test admits and answers them.
class FakeGenerator : public TextGenerator {
 public:
  const std::string& name() const override { return name_; }
  int64_t max_model_len() const override { return 64; }
  int64_t created_unix_seconds() const override { return 0; }
  std::string_view TokenBytes(int32_t) const override { return {}; }
  GenerationMetrics Metrics() const override { return {}; }
  void Generate(GenerationRequest request, GenerationCallbacks callbacks) override {
    requests.push_back(std::move(request));
    calls.push_back(std::move(callbacks));
  }

  void Admit(size_t i, absl::Status status = absl::OkStatus()) { calls[i].admitted(std::move(status), ""); }
  void Emit(size_t i, std::string text, FinishReason reason = FinishReason::kNone, absl::Status error = {},
            GenerationTimings timings = {}, int64_t prompt_tokens = 0, int64_t output_tokens = 0) {
    GenerationOutput o;
    o.num_prompt_tokens = prompt_tokens;
    o.num_output_tokens = output_tokens;
    o.text = std::move(text);
    o.finish_reason = reason;
    o.error = std::move(error);
    o.timings = timings;
    calls[i].output(std::move(o));
  }

  std::vector<GenerationRequest> requests;
  std::vector<GenerationCallbacks> calls;

 private:
  std::string name_ = "fake";
};

// What the model version would get. `stopped`: the client has gone.
class FakeSink : public ResponseSink {
 public:
  struct Response {
    std::vector<std::string> texts;
    Shape shape;
    bool final = false;
  };
  absl::Status Send(std::vector<Tensor> outputs, bool final) override {
    if (stopped) return absl::CancelledError("client gone");
    Response r;
    r.final = final;
    EXPECT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].name, "text_output");
    EXPECT_EQ(outputs[0].dtype, DataType::kBytes);
    r.shape = outputs[0].shape;
    const auto elements = SplitBytesElements(outputs[0].data.AsStringView());
    EXPECT_TRUE(elements.ok()) << elements.status();
    for (std::string_view e : *elements) r.texts.emplace_back(e);
    responses.push_back(std::move(r));
    if (final) ended = true;
    return absl::OkStatus();
  }
  void Finish(absl::Status status) override {
    finish = std::move(status);
    finished = ended = true;
  }
  void SetGenerationTimings(const GenerationTimings& t) override {
    EXPECT_FALSE(ended) << "timings must come before the final response";
    timings = t;
  }
  bool IsStopped() const override { return stopped; }

  std::vector<Response> responses;
  bool finished = false, ended = false, stopped = false;
  absl::Status finish;
  std::optional<GenerationTimings> timings;
};

class LlmTensorInstanceTest : public ::testing::Test {
 protected:
  // Runs one request with `inputs` (rows: its batch rows) on an instance.
  void Run(std::vector<Tensor> inputs, bool batched = false, int64_t rows = 1) {
    LlmTensorInstance instance(generator_, batched);
    parameters_ = std::make_unique<Parameters>();
    RequestContext context{parameters_.get(), client_, deadline_, rows, meter_};
    std::vector<ModelInstance::DecoupledRequest> requests;
    requests.push_back({std::move(inputs), context, ResponseSender(sink_)});
    instance.ExecuteDecoupled(std::move(requests));
  }
  static std::vector<Tensor> Prompt(std::string text, std::vector<Tensor> more = {}) {
    more.insert(more.begin(), Bytes("text_input", {std::move(text)}, {1}));
    return more;
  }

  FakeGenerator generator_;
  std::shared_ptr<FakeSink> sink_ = std::make_shared<FakeSink>();
  std::shared_ptr<CancellationToken> client_ = std::make_shared<CancellationToken>();
  std::optional<TimePoint> deadline_ = std::chrono::steady_clock::now() + std::chrono::hours(1);
  std::unique_ptr<Parameters> parameters_;
  std::shared_ptr<TokenMeter> meter_;  // null: not metered
};

// Sums what it is charged.
class CountingMeter : public TokenMeter {
 public:
  void Charge(int64_t prompt_tokens, int64_t completion_tokens) override {
    ++charges;
    prompt += prompt_tokens;
    completion += completion_tokens;
  }
  int charges = 0;
  int64_t prompt = 0, completion = 0;
};

TEST_F(LlmTensorInstanceTest, EachGenerationChargesItsTokensAsItEndsAbortedOnesToo) {
  auto meter = std::make_shared<CountingMeter>();
  meter_ = meter;
  Run({Bytes("text_input", {"a", "b"}, {2, 1})}, /*batched=*/true, /*rows=*/2);
  ASSERT_EQ(generator_.requests.size(), 2u);
  generator_.Admit(0);
  generator_.Admit(1);
  generator_.Emit(0, "x", FinishReason::kNone, {}, {}, 3, 1);  // not the end: nothing charged
  EXPECT_EQ(meter->charges, 0);
  generator_.Emit(0, "y", FinishReason::kLength, {}, {}, 3, 2);
  generator_.Emit(1, "", FinishReason::kAbort, absl::CancelledError("gone"), {}, 4, 1);
  EXPECT_EQ(meter->charges, 2);
  EXPECT_EQ(meter->prompt, 7);
  EXPECT_EQ(meter->completion, 3);
}

TEST_F(LlmTensorInstanceTest, StreamSendsEachPieceOfTextAndTheLastOneFinal) {
  Run(Prompt("Hi", {Bytes("sampling_parameters", {R"({"max_tokens": 3})"}, {1}), Bool("stream", true)}));
  ASSERT_EQ(generator_.requests.size(), 1u);
  const GenerationRequest& g = generator_.requests[0];
  EXPECT_EQ(g.prompt_text, "Hi");
  EXPECT_EQ(g.sampling.max_tokens, 3);
  EXPECT_TRUE(g.max_tokens_set);
  EXPECT_FALSE(g.echo);
  EXPECT_EQ(g.deadline, deadline_);
  ASSERT_NE(g.cancellation, nullptr);
  EXPECT_FALSE(g.cancellation->IsCancelled());
  generator_.Admit(0);
  generator_.Emit(0, "He");
  generator_.Emit(0, "");  // held back: nothing to send
  GenerationTimings t;
  t.first_token = TimePoint() + std::chrono::seconds(5);
  generator_.Emit(0, "llo", FinishReason::kLength, {}, t);
  ASSERT_EQ(sink_->responses.size(), 2u);
  EXPECT_THAT(sink_->responses[0].texts, ElementsAre("He"));
  EXPECT_FALSE(sink_->responses[0].final);
  EXPECT_EQ(sink_->responses[0].shape, Shape{1});
  EXPECT_THAT(sink_->responses[1].texts, ElementsAre("llo"));
  EXPECT_TRUE(sink_->responses[1].final);
  ASSERT_TRUE(sink_->timings.has_value());
  EXPECT_EQ(sink_->timings->first_token, t.first_token);
  EXPECT_FALSE(sink_->finished);
}

TEST_F(LlmTensorInstanceTest, StreamEndsWithAnEmptyFinalWhenTheLastOutputHasNoText) {
  Run(Prompt("Hi", {Bool("stream", true)}));
  generator_.Admit(0);
  generator_.Emit(0, "a");
  generator_.Emit(0, "", FinishReason::kStop);
  ASSERT_EQ(sink_->responses.size(), 1u);
  EXPECT_FALSE(sink_->responses[0].final);
  EXPECT_TRUE(sink_->finished);
  EXPECT_TRUE(sink_->finish.ok()) << sink_->finish;
  EXPECT_TRUE(sink_->timings.has_value());
}

TEST_F(LlmTensorInstanceTest, WithoutStreamOneResponseAtTheEndWithThePromptPrepended) {
  Run(Prompt("Hi "));
  generator_.Admit(0);
  generator_.Emit(0, "the");
  generator_.Emit(0, "re");
  EXPECT_TRUE(sink_->responses.empty());
  generator_.Emit(0, "!", FinishReason::kLength);
  ASSERT_EQ(sink_->responses.size(), 1u);
  EXPECT_THAT(sink_->responses[0].texts, ElementsAre("Hi there!"));
  EXPECT_TRUE(sink_->responses[0].final);
  EXPECT_TRUE(sink_->timings.has_value());
}

TEST_F(LlmTensorInstanceTest, ExcludeInputInOutputLeavesThePromptOut) {
  Run(Prompt("Hi ", {Bool("exclude_input_in_output", true)}));
  generator_.Admit(0);
  generator_.Emit(0, "there", FinishReason::kStop);
  ASSERT_EQ(sink_->responses.size(), 1u);
  EXPECT_THAT(sink_->responses[0].texts, ElementsAre("there"));
}

TEST_F(LlmTensorInstanceTest, ABatchOfPromptsIsOneResponseOfEveryTextWithMergedTimings) {
  Run({Bytes("text_input", {"a", "b", "c"}, {3, 1})}, /*batched=*/true, /*rows=*/3);
  ASSERT_EQ(generator_.requests.size(), 3u);
  const TimePoint t0 = TimePoint() + std::chrono::hours(1);
  for (size_t i = 0; i < 3; ++i) generator_.Admit(i);
  for (size_t i : {2u, 0u, 1u}) {
    GenerationTimings t;
    t.arrival = t0 + std::chrono::seconds(i);
    t.finished = t0 + std::chrono::seconds(10 - i);
    t.detokenize = std::chrono::microseconds(1);
    generator_.Emit(i, std::string(1, static_cast<char>('x' + i)), FinishReason::kLength, {}, t);
    EXPECT_EQ(sink_->responses.size(), i == 1 ? 1u : 0u);
  }
  ASSERT_EQ(sink_->responses.size(), 1u);
  EXPECT_THAT(sink_->responses[0].texts, ElementsAre("ax", "by", "cz"));
  EXPECT_EQ(sink_->responses[0].shape, (Shape{3, 1}));
  ASSERT_TRUE(sink_->timings.has_value());
  EXPECT_EQ(sink_->timings->arrival, t0);
  EXPECT_EQ(sink_->timings->finished, t0 + std::chrono::seconds(10));
  EXPECT_EQ(sink_->timings->detokenize, std::chrono::microseconds(3));
}

TEST_F(LlmTensorInstanceTest, ARefusedPromptFailsTheBatchAndCancelsTheOthers) {
  Run({Bytes("text_input", {"a", "way too long", "c"}, {3, 1})}, /*batched=*/true, /*rows=*/3);
  ASSERT_EQ(generator_.requests.size(), 3u);
  generator_.Admit(0);
  generator_.Emit(0, "x");
  generator_.Admit(1, absl::InvalidArgumentError("maximum context length"));
  EXPECT_TRUE(sink_->finished);
  EXPECT_EQ(sink_->finish.code(), absl::StatusCode::kInvalidArgument);
  for (const GenerationRequest& g : generator_.requests) EXPECT_TRUE(g.cancellation->IsCancelled());
  EXPECT_FALSE(client_->IsCancelled());  // the client's token is only read
  // The others end (aborted by the engine) without a second answer.
  generator_.Admit(2);
  generator_.Emit(0, "", FinishReason::kAbort, absl::CancelledError("request cancelled"));
  generator_.Emit(2, "", FinishReason::kAbort, absl::CancelledError("request cancelled"));
  EXPECT_TRUE(sink_->responses.empty());
  EXPECT_EQ(sink_->finish.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LlmTensorInstanceTest, AnAbortAnswersItsError) {
  Run(Prompt("Hi", {Bool("stream", true)}));
  generator_.Admit(0);
  generator_.Emit(0, "a");
  generator_.Emit(0, "", FinishReason::kAbort, absl::DeadlineExceededError("the request's deadline passed"));
  EXPECT_TRUE(sink_->finished);
  EXPECT_EQ(sink_->finish.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(sink_->responses.size(), 1u);
}

TEST_F(LlmTensorInstanceTest, AFailedStepIsAnInternalError) {
  Run(Prompt("Hi"));
  generator_.Admit(0);
  generator_.Emit(0, "", FinishReason::kError);
  EXPECT_EQ(sink_->finish.code(), absl::StatusCode::kInternal);
}

TEST_F(LlmTensorInstanceTest, TheClientsCancellationReachesTheGeneration) {
  Run(Prompt("Hi"));
  ASSERT_EQ(generator_.requests.size(), 1u);
  client_->Cancel();
  EXPECT_TRUE(generator_.requests[0].cancellation->IsCancelled());
}

TEST_F(LlmTensorInstanceTest, AResponseNobodyTakesCancelsTheGeneration) {
  Run(Prompt("Hi", {Bool("stream", true)}));
  generator_.Admit(0);
  sink_->stopped = true;  // e.g. the deadline passed
  generator_.Emit(0, "a");
  EXPECT_TRUE(generator_.requests[0].cancellation->IsCancelled());
  generator_.Emit(0, "b", FinishReason::kLength);  // the sender is finished: dropped
  EXPECT_TRUE(sink_->responses.empty());
}

TEST_F(LlmTensorInstanceTest, BadTensorsFailTheRequestWithoutAGeneration) {
  Run(Prompt("Hi", {Bytes("sampling_parameters", {"{\"temperature\": \"hot\"}"}, {1})}));
  EXPECT_TRUE(generator_.requests.empty());
  EXPECT_EQ(sink_->finish.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(sink_->finish.message()), HasSubstr("temperature"));
}

TEST_F(LlmTensorInstanceTest, ARefusalBeforeAnyOutputIsTheAnswer) {
  Run(Prompt("Hi"));
  generator_.Admit(0, absl::ResourceExhaustedError("queue full"));
  EXPECT_EQ(sink_->finish.code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(LlmTensorInstanceTest, ExecuteIsNeverTheWay) {
  LlmTensorInstance instance(generator_, false);
  EXPECT_EQ(instance.Execute({}).status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace infera::llm
