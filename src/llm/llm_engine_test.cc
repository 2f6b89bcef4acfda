#include "llm/llm_engine.h"

#include <limits>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/test_tokenizers.h"
#include "common/str_cat.h"
#include "metrics/server_metrics.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;

// A fake model runner: the next token is (the sequence's last input token + 1) mod 256,
// so generations are predictable; it can be told to fail.
class FakeRunner : public ModelRunner {
 public:
  explicit FakeRunner(std::atomic<int>* steps, bool fail = false) : steps_(steps), fail_(fail) {}
  absl::StatusOr<ModelRunnerOutput> Execute(const SchedulerOutput& step) override {
    ++*steps_;
    if (fail_) return absl::InternalError("boom");
    ModelRunnerOutput out;
    out.vocab_size = vocab_size();
    for (const auto& seq : step.sequences) {
      if (!seq.sample) continue;
      std::vector<float> row(out.vocab_size, 0.0f);
      row[(seq.token_ids.back() + 1) % 256] = 10.0f;
      out.logits.insert(out.logits.end(), row.begin(), row.end());
    }
    return out;
  }
  int64_t vocab_size() const override { return 262; }

 private:
  std::atomic<int>* steps_;
  bool fail_;
};

struct Result {
  absl::Mutex mu;
  std::string text;
  std::vector<int32_t> tokens;
  int outputs = 0;
  FinishReason reason = FinishReason::kNone;
  int64_t prompt_tokens = 0;
  double queue_seconds = -1;  // from the last output
  void Wait() {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(+[](Result* r) { return r->reason != FinishReason::kNone; }, this));
  }
  OutputCallback Callback() {
    return [this](RequestOutput o) {
      absl::MutexLock lock(&mu);
      text += o.text;
      tokens.insert(tokens.end(), o.token_ids.begin(), o.token_ids.end());
      ++outputs;
      prompt_tokens = o.num_prompt_tokens;
      if (o.finish_reason != FinishReason::kNone) {
        reason = o.finish_reason;
        queue_seconds = o.queue_seconds;
      }
    };
  }
};

class LlmEngineTest : public ::testing::Test {
 protected:
  void Start(bool fail = false, int32_t num_blocks = 64, std::shared_ptr<LlmMetricsSeries> series = nullptr) {
    tokenizer_ = std::move(*Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer)));
    EngineOptions o;
    o.num_blocks = num_blocks;
    o.block_size = 4;
    o.scheduler.max_model_len = 64;
    o.scheduler.max_num_batched_tokens = 16;
    o.scheduler.eos_token_ids = {260};
    o.metrics_series = std::move(series);
    auto engine = LlmEngine::Create(o, std::make_unique<FakeRunner>(&steps_, fail), tokenizer_.get());
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }
  GenerateRequest Request(std::string_view prompt, int64_t max_tokens) {
    GenerateRequest r;
    r.prompt_token_ids = tokenizer_->Encode(prompt, false);
    r.sampling.temperature = 0;
    r.sampling.max_tokens = max_tokens;
    return r;
  }
  std::unique_ptr<Tokenizer> tokenizer_;
  std::atomic<int> steps_{0};
  std::unique_ptr<LlmEngine> engine_;
};

TEST_F(LlmEngineTest, StreamsTokensUntilMaxTokens) {
  Start();
  Result r;
  ASSERT_TRUE(engine_->AddRequest(Request("abc", 4), r.Callback()).ok());
  r.Wait();
  EXPECT_EQ(r.reason, FinishReason::kLength);
  EXPECT_THAT(r.tokens, ElementsAre('d', 'e', 'f', 'g'));
  EXPECT_EQ(r.text, "defg");
  EXPECT_EQ(r.outputs, 4);
  EXPECT_EQ(r.prompt_tokens, 3);
  LlmMetricsSnapshot m = engine_->Metrics();
  EXPECT_EQ(m.generation_tokens, 4u);
  EXPECT_EQ(m.prompt_tokens, 3u);
  EXPECT_EQ(m.time_to_first_token.count, 1u);
  EXPECT_EQ(m.inter_token_latency.count, 3u);
  EXPECT_EQ(m.requests_finished_length, 1u);
}

TEST_F(LlmEngineTest, StopStringsEndTheRequestAndAreNotReturned) {
  Start();
  Result r;
  GenerateRequest req = Request("a", 20);
  req.sampling.stop = {"ef"};
  ASSERT_TRUE(engine_->AddRequest(std::move(req), r.Callback()).ok());
  r.Wait();
  EXPECT_EQ(r.reason, FinishReason::kStop);
  EXPECT_EQ(r.text, "bcd");
}

TEST_F(LlmEngineTest, ConcurrentRequestsGetTheSameResultsAsAlone) {
  Start(false, /*num_blocks=*/24);  // tight: forces waiting and preemption
  std::vector<std::unique_ptr<Result>> results;
  for (int i = 0; i < 12; ++i) {
    results.push_back(std::make_unique<Result>());
    std::string prompt(5 + i, static_cast<char>('A' + i));
    ASSERT_TRUE(engine_->AddRequest(Request(prompt, 10), results.back()->Callback()).ok());
  }
  for (int i = 0; i < 12; ++i) {
    results[i]->Wait();
    std::string expected;
    for (int k = 1; k <= 10; ++k) expected += static_cast<char>('A' + i + k);
    EXPECT_EQ(results[i]->text, expected) << i;
  }
}

TEST_F(LlmEngineTest, CancelledRequestsAreDropped) {
  Start();
  auto token = std::make_shared<CancellationToken>();
  token->Cancel();
  Result r;
  GenerateRequest req = Request("abc", 40);
  req.cancellation = token;
  ASSERT_TRUE(engine_->AddRequest(std::move(req), r.Callback()).ok());
  r.Wait();
  EXPECT_EQ(r.reason, FinishReason::kAbort);
  EXPECT_EQ(engine_->Metrics().requests_aborted, 1u);
}

TEST_F(LlmEngineTest, RejectsRequestsThatCannotRun) {
  Start();
  Result r;
  EXPECT_EQ(engine_->AddRequest(Request("", 4), r.Callback()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->AddRequest(Request("abc", 62), r.Callback()).code(), absl::StatusCode::kInvalidArgument);
  // max_tokens near INT64_MAX used to overflow the length check (and be accepted).
  for (int64_t max_tokens : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max() - 2}) {
    absl::Status huge = engine_->AddRequest(Request("abc", max_tokens), r.Callback());
    EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument) << max_tokens;
    EXPECT_NE(huge.message().find("max_tokens"), std::string::npos) << huge;
  }
  GenerateRequest bad = Request("abc", 4);
  bad.prompt_token_ids.push_back(999);
  EXPECT_EQ(engine_->AddRequest(std::move(bad), r.Callback()).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LlmEngineTest, AFailedStepFailsItsRequestsAndTheEngineGoesOn) {
  Start(/*fail=*/true);
  Result r;
  ASSERT_TRUE(engine_->AddRequest(Request("abc", 4), r.Callback()).ok());
  r.Wait();
  EXPECT_EQ(r.reason, FinishReason::kError);
  Result again;
  ASSERT_TRUE(engine_->AddRequest(Request("x", 1), again.Callback()).ok());
  again.Wait();
  EXPECT_EQ(again.reason, FinishReason::kError);
}

TEST_F(LlmEngineTest, ShutdownAbortsWhatIsLeft) {
  Start();
  Result r;
  ASSERT_TRUE(engine_->AddRequest(Request("abc", 60), r.Callback()).ok());
  engine_->Shutdown();
  r.Wait();
  EXPECT_TRUE(r.reason == FinishReason::kAbort || r.reason == FinishReason::kLength);
  EXPECT_EQ(engine_->AddRequest(Request("abc", 2), r.Callback()).code(), absl::StatusCode::kUnavailable);
}

TEST_F(LlmEngineTest, EndedRequestsAreRecordedByReasonWithTheirTokenCountsAndQueueTime) {
  ServerMetrics server_metrics;
  Start(false, 64, LlmMetricsSeries::Acquire(&server_metrics, "fake", 64));
  Result length, stop, aborted;
  ASSERT_TRUE(engine_->AddRequest(Request("abc", 4), length.Callback()).ok());
  length.Wait();
  GenerateRequest req = Request("a", 20);
  req.sampling.stop = {"ef"};
  ASSERT_TRUE(engine_->AddRequest(std::move(req), stop.Callback()).ok());
  stop.Wait();
  req = Request("abcdef", 40);
  req.cancellation = std::make_shared<CancellationToken>();
  std::const_pointer_cast<CancellationToken>(req.cancellation)->Cancel();
  ASSERT_TRUE(engine_->AddRequest(std::move(req), aborted.Callback()).ok());
  aborted.Wait();

  const LlmMetricsSnapshot m = engine_->Metrics();
  EXPECT_EQ(m.requests_finished_length, 1u);
  EXPECT_EQ(m.requests_finished_stop, 1u);
  EXPECT_EQ(m.requests_aborted, 1u);
  EXPECT_EQ(m.e2e_request_latency.count, 3u);
  EXPECT_EQ(m.e2e_request_latency.bounds, RequestLatencyBuckets());
  EXPECT_EQ(m.time_to_first_token.bounds, TimeToFirstTokenBuckets());
  // The last output carries the queue time the histogram recorded (the aborted request
  // was never scheduled: 0, not observed).
  EXPECT_EQ(m.queue_time.count, 2u);
  EXPECT_DOUBLE_EQ(m.queue_time.sum, length.queue_seconds + stop.queue_seconds);
  EXPECT_GE(length.queue_seconds, 0);
  EXPECT_EQ(aborted.queue_seconds, 0);

  const std::string text = server_metrics.Serialize();
  EXPECT_THAT(text, ::testing::HasSubstr(R"(infera_llm_requests_finished_total{finished_reason="length",model="fake"} 1)"));
  EXPECT_THAT(text, ::testing::HasSubstr(R"(infera_llm_requests_finished_total{finished_reason="stop",model="fake"} 1)"));
  EXPECT_THAT(text, ::testing::HasSubstr(R"(infera_llm_requests_finished_total{finished_reason="abort",model="fake"} 1)"));
  EXPECT_THAT(text, ::testing::HasSubstr(R"(infera_llm_requests_finished_total{finished_reason="error",model="fake"} 0)"));
  // Prompts of 3, 1 and 6 tokens; 4 ("defg"), 4 ("bcde": the stop string's tokens were
  // generated) and 0 generated tokens.
  EXPECT_THAT(text, ::testing::HasSubstr(R"(infera_llm_request_prompt_tokens_sum{model="fake"} 10)"));
  EXPECT_THAT(text, ::testing::HasSubstr(R"(infera_llm_request_prompt_tokens_bucket{model="fake",le="2"} 1)"));
  EXPECT_THAT(text, ::testing::HasSubstr(R"(infera_llm_request_generation_tokens_bucket{model="fake",le="1"} 1)"));
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "infera_llm_request_generation_tokens_sum{model=\"fake\"} " + std::to_string(m.generation_tokens)));
  EXPECT_THAT(text, ::testing::HasSubstr(R"(vllm:request_success_total{finished_reason="stop",model_name="fake",engine="0"} 1)"));
  // Prefill/decode/inference times: only the two requests that produced tokens.
  for (const char* phase : {"prefill", "decode", "inference"}) {
    EXPECT_THAT(text, ::testing::HasSubstr(StrCat("infera_llm_request_", phase, R"(_time_seconds_count{model="fake"} 2)")));
  }
  engine_.reset();
}

}  // namespace
}  // namespace infera::llm
