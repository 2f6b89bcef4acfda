#include "llm/llm_engine.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/test_tokenizers.h"
#include "common/str_cat.h"
#include "metrics/server_metrics.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;

// What the test sees of the engine's steps (FakeRunner writes it on the engine thread).
struct StepLog {
  absl::Mutex mu;
  std::thread::id engine_thread ABSL_GUARDED_BY(mu);
  std::vector<std::vector<RequestId>> steps ABSL_GUARDED_BY(mu);  // the requests of each step
  int allowed ABSL_GUARDED_BY(mu) = std::numeric_limits<int>::max();  // steps the runner may start

  // Lets `n` more steps run (after Gate(0)).
  void Allow(int n) {
    absl::MutexLock lock(&mu);
    allowed += n;
  }
  void Gate(int allowed_steps) {
    absl::MutexLock lock(&mu);
    allowed = allowed_steps;
  }
  // How many steps included `id`, and the last one that did (1-based; 0: none).
  std::pair<int, int> StepsWith(RequestId id) {
    absl::MutexLock lock(&mu);
    int count = 0, last = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (std::find(steps[i].begin(), steps[i].end(), id) != steps[i].end()) ++count, last = static_cast<int>(i) + 1;
    }
    return {count, last};
  }
};

// A fake model runner: the next token is (the sequence's last input token + 1) mod 256,
// so generations are predictable; it can be told to fail, held at a gate (StepLog::Gate,
// Allow) and given a hook that runs inside step n (1-based).
class FakeRunner : public ModelRunner {
 public:
  explicit FakeRunner(std::atomic<int>* steps, bool fail = false, StepLog* log = nullptr,
                      std::function<void(int)> on_step = nullptr)
      : steps_(steps), fail_(fail), log_(log), on_step_(std::move(on_step)) {}
  absl::StatusOr<ModelRunnerOutput> Execute(const SchedulerOutput& step) override {
    const int n = ++*steps_;
    if (log_) {
      absl::MutexLock lock(&log_->mu);
      log_->mu.Await(absl::Condition(
          +[](StepLog* l) ABSL_NO_THREAD_SAFETY_ANALYSIS { return static_cast<int>(l->steps.size()) < l->allowed; },
          log_));
      log_->engine_thread = std::this_thread::get_id();
      std::vector<RequestId>& ids = log_->steps.emplace_back();
      for (const auto& seq : step.sequences) ids.push_back(seq.request_id);
    }
    if (on_step_) on_step_(n);
    if (fail_) return absl::InternalError("boom");
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
  int64_t vocab_size() const override { return 262; }

 private:
  std::atomic<int>* steps_;
  bool fail_;
  StepLog* log_;
  std::function<void(int)> on_step_;
};

struct Result {
  absl::Mutex mu;
  std::string text;
  std::vector<int32_t> tokens;
  int outputs = 0;
  FinishReason reason = FinishReason::kNone;
  absl::Status error;
  int64_t prompt_tokens = 0;
  double queue_seconds = -1;  // from the last output
  GenerationTimings timings;  // from the last output
  std::thread::id thread;     // that called back
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
      thread = std::this_thread::get_id();
      if (o.finish_reason != FinishReason::kNone) {
        reason = o.finish_reason;
        error = o.error;
        queue_seconds = o.queue_seconds;
        timings = o.timings;
      }
    };
  }
};

class LlmEngineTest : public ::testing::Test {
 protected:
  void Start(bool fail = false, int32_t num_blocks = 64, std::shared_ptr<LlmMetricsSeries> series = nullptr,
             std::function<void(int)> on_step = nullptr) {
    tokenizer_ = std::move(*Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer)));
    EngineOptions o;
    o.num_blocks = num_blocks;
    o.block_size = 4;
    o.scheduler.max_model_len = 64;
    o.scheduler.max_num_batched_tokens = 16;
    o.scheduler.eos_token_ids = {260};
    o.metrics_series = std::move(series);
    auto engine = LlmEngine::Create(o, std::make_unique<FakeRunner>(&steps_, fail, &log_, std::move(on_step)),
                                    tokenizer_.get());
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
  StepLog log_;
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

// The engine thread only computes: text reaches the callback from the output thread, with
// the request's timings in order on the final output.
TEST_F(LlmEngineTest, OutputsComeFromTheOutputThreadWithTimings) {
  Start();
  Result r;
  ASSERT_TRUE(engine_->AddRequest(Request("abc", 3), r.Callback()).ok());
  r.Wait();
  absl::MutexLock lock(&r.mu);
  {
    absl::MutexLock log_lock(&log_.mu);
    EXPECT_NE(r.thread, log_.engine_thread);
  }
  EXPECT_NE(r.thread, std::this_thread::get_id());
  const GenerationTimings& t = r.timings;
  EXPECT_LE(t.arrival, t.queued);
  EXPECT_LE(t.queued, t.scheduled);
  EXPECT_LE(t.scheduled, t.first_token);
  EXPECT_LE(t.first_token, t.finished);
  EXPECT_GT(t.detokenize.count(), 0);
}

// A stop string is found on the output thread; the engine learns it before the client
// sees the final output, so it runs the request in at most one more step (whose token is
// discarded, and not counted) and frees it at the step after.
TEST_F(LlmEngineTest, AStopStringHitIsFreedInTheEngineAtItsNextStep) {
  Start();
  log_.Gate(5);  // "a" → b c d e f: f completes the stop string in step 5
  Result r;
  GenerateRequest req = Request("a", 40);
  req.sampling.stop = {"ef"};
  ASSERT_TRUE(engine_->AddRequest(std::move(req), r.Callback()).ok());
  r.Wait();
  EXPECT_EQ(r.text, "bcd");
  log_.Allow(1000);
  Result sentinel;
  ASSERT_TRUE(engine_->AddRequest(Request("x", 1), sentinel.Callback()).ok());
  sentinel.Wait();
  const auto [count, last] = log_.StepsWith(1);
  EXPECT_LE(count, 6);
  EXPECT_LE(last, 6);
  {
    absl::MutexLock lock(&r.mu);
    EXPECT_EQ(r.outputs, 5);  // nothing after the final output
  }
  EXPECT_EQ(engine_->Metrics().generation_tokens, 5u + 1u);  // the discarded token is not counted
  EXPECT_EQ(engine_->Metrics().requests_finished_stop, 1u);
}

// The client goes away during step 3: the engine delivers that step's token and drops the
// request at the next step.
TEST_F(LlmEngineTest, ACancelledRequestStopsAtTheNextStep) {
  auto token = std::make_shared<CancellationToken>();
  Start(false, 64, nullptr, [token](int step) {
    if (step == 3) token->Cancel();
  });
  Result r;
  GenerateRequest req = Request("abc", 40);
  req.cancellation = token;
  ASSERT_TRUE(engine_->AddRequest(std::move(req), r.Callback()).ok());
  r.Wait();
  absl::MutexLock lock(&r.mu);
  EXPECT_EQ(r.reason, FinishReason::kAbort);
  EXPECT_EQ(r.error.code(), absl::StatusCode::kCancelled) << r.error;
  EXPECT_EQ(r.tokens.size(), 3u);
  EXPECT_EQ(steps_.load(), 3);
  EXPECT_EQ(engine_->Metrics().generation_tokens, 3u);
}

// A deadline that passes while the request generates (step 2 waits for it) ends it at the
// next step with DeadlineExceeded (on a loaded machine it may pass before step 2: then
// earlier, never later); one already past ends it before any step.
TEST_F(LlmEngineTest, APassedDeadlineDropsTheRequest) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  Start(false, 64, nullptr, [deadline](int step) {
    if (step != 2) return;
    while (std::chrono::steady_clock::now() <= deadline) std::this_thread::yield();
  });
  Result r;
  GenerateRequest req = Request("abc", 40);
  req.deadline = deadline;
  ASSERT_TRUE(engine_->AddRequest(std::move(req), r.Callback()).ok());
  r.Wait();
  {
    absl::MutexLock lock(&r.mu);
    EXPECT_EQ(r.reason, FinishReason::kAbort);
    EXPECT_EQ(r.error.code(), absl::StatusCode::kDeadlineExceeded) << r.error;
    EXPECT_LE(r.tokens.size(), 2u);
    EXPECT_LE(steps_.load(), 2);
  }
  Result late;
  req = Request("abc", 40);
  req.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  ASSERT_TRUE(engine_->AddRequest(std::move(req), late.Callback()).ok());
  late.Wait();
  absl::MutexLock lock(&late.mu);
  EXPECT_EQ(late.reason, FinishReason::kAbort);
  EXPECT_EQ(late.error.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(late.tokens.empty());
  EXPECT_EQ(engine_->Metrics().requests_aborted, 2u);
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
  EXPECT_EQ(r.error.code(), absl::StatusCode::kCancelled);
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
