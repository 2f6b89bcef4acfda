// The output processor on hand-made engine steps (a fake engine) with the byte-level test
// tokenizer (token id == byte) and an injected clock: text streaming, stop strings across
// outputs and the abort they cause, UTF-8 split across tokens, logprobs alignment, engine
// ends, metrics and timings.
#include "llm/output_processor.h"

#include <chrono>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/test_tokenizers.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using TimePoint = std::chrono::steady_clock::time_point;

constexpr RequestId kId = 7;

class OutputProcessorTest : public ::testing::Test {
 protected:
  OutputProcessorTest()
      : tokenizer_(std::move(*Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer)))),
        processor_(*tokenizer_, &metrics_, [aborts = &aborts_](RequestId id) { aborts->push_back(id); },
                   [now = &now_] { return *now += microseconds(1); }) {}

  // A request registered with `sampling`, arriving at t0, queued at t0 + 1 ms.
  NewOutputRequest Added(RequestId id, SamplingParams sampling, std::vector<GenerationOutput>* outputs) {
    NewOutputRequest r;
    r.id = id;
    r.sampling = std::move(sampling);
    r.num_prompt_tokens = 3;
    r.arrival = t0_;
    r.queued = t0_ + milliseconds(1);
    r.callback = [this, outputs](GenerationOutput o) {
      if (o.finish_reason != FinishReason::kNone) aborts_at_final_ = aborts_.size();
      outputs->push_back(std::move(o));
    };
    return r;
  }
  static EngineRequestOutput Token(RequestId id, int32_t token, FinishReason reason = FinishReason::kNone,
                                   float logprob = 0.0f, std::vector<TokenLogprob> top = {}) {
    EngineRequestOutput o;
    o.id = id;
    o.token = SampledToken{token, logprob, std::move(top)};
    o.finish_reason = reason;
    return o;
  }
  // One step at t0 + `ms` with `outputs` (and the registration / first schedule when given).
  std::vector<RequestId> Step(int ms, std::vector<EngineRequestOutput> outputs,
                              std::vector<NewOutputRequest> added = {}, std::vector<ScheduledEvent> scheduled = {}) {
    EngineStepOutput step;
    step.added = std::move(added);
    step.scheduled = std::move(scheduled);
    step.outputs = std::move(outputs);
    step.time = t0_ + milliseconds(ms);
    const size_t before = aborts_.size();
    processor_.Process(std::move(step));
    return std::vector<RequestId>(aborts_.begin() + static_cast<ptrdiff_t>(before), aborts_.end());
  }
  // Registers request kId, scheduled at 2 ms with 1 cached token, then one token per step
  // (steps at 10, 20, ... ms; the last with `last_reason`); returns the aborts of each step.
  std::vector<std::vector<RequestId>> RunBytes(const SamplingParams& sampling, std::string_view bytes,
                                               std::vector<GenerationOutput>* outputs,
                                               FinishReason last_reason = FinishReason::kNone) {
    std::vector<std::vector<RequestId>> aborts;
    std::vector<NewOutputRequest> added;
    added.push_back(Added(kId, sampling, outputs));
    aborts.push_back(Step(0, {}, std::move(added), {{kId, t0_ + milliseconds(2), 1}}));
    for (size_t i = 0; i < bytes.size(); ++i) {
      const FinishReason reason = i + 1 == bytes.size() ? last_reason : FinishReason::kNone;
      aborts.push_back(Step(10 * static_cast<int>(i + 1), {Token(kId, static_cast<uint8_t>(bytes[i]), reason)}));
    }
    return aborts;
  }
  static std::string Text(const std::vector<GenerationOutput>& outputs) {
    std::string text;
    for (const GenerationOutput& o : outputs) text += o.text;
    return text;
  }

  const TimePoint t0_ = TimePoint() + std::chrono::hours(1);
  TimePoint now_ = t0_ + std::chrono::seconds(1);  // the injected clock: +1 µs per reading
  std::vector<RequestId> aborts_;                  // every abort, in order
  size_t aborts_at_final_ = 0;                     // aborts_.size() when the last final output came
  std::unique_ptr<Tokenizer> tokenizer_;
  LlmMetrics metrics_;
  OutputProcessor processor_;
};

TEST_F(OutputProcessorTest, StreamsOneOutputPerTokenAndEndsWithCountsAndTimings) {
  std::vector<GenerationOutput> outputs;
  RunBytes(SamplingParams{}, "abc", &outputs, FinishReason::kLength);
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].text, "a");
  EXPECT_THAT(outputs[1].token_ids, ElementsAre('b'));
  EXPECT_EQ(outputs[1].num_output_tokens, 2);
  EXPECT_EQ(outputs[1].finish_reason, FinishReason::kNone);
  const GenerationOutput& last = outputs[2];
  EXPECT_EQ(last.text, "c");
  EXPECT_EQ(last.finish_reason, FinishReason::kLength);
  EXPECT_TRUE(last.error.ok());
  EXPECT_EQ(last.num_prompt_tokens, 3);
  EXPECT_EQ(last.num_output_tokens, 3);
  EXPECT_EQ(last.num_cached_tokens, 1);
  EXPECT_DOUBLE_EQ(last.queue_seconds, 0.002);
  const GenerationTimings& t = last.timings;
  EXPECT_EQ(t.arrival, t0_);
  EXPECT_EQ(t.queued, t0_ + milliseconds(1));
  EXPECT_EQ(t.scheduled, t0_ + milliseconds(2));
  EXPECT_EQ(t.first_token, t0_ + milliseconds(10));
  EXPECT_EQ(t.detokenize, microseconds(3));  // one clock tick per output processed
  EXPECT_GT(t.finished, t.first_token);      // the injected clock, read at the end
  EXPECT_EQ(processor_.num_requests(), 0u);

  const LlmMetricsSnapshot m = metrics_.Snapshot();
  EXPECT_EQ(m.generation_tokens, 3u);
  EXPECT_EQ(m.prompt_tokens, 3u);
  EXPECT_EQ(m.time_to_first_token.count, 1u);
  EXPECT_DOUBLE_EQ(m.time_to_first_token.sum, 0.010);  // arrival → the first token's step
  EXPECT_EQ(m.inter_token_latency.count, 2u);
  EXPECT_DOUBLE_EQ(m.inter_token_latency.sum, 0.020);
  EXPECT_EQ(m.requests_finished_length, 1u);
}

TEST_F(OutputProcessorTest, AStopStringSpanningOutputsEndsTheRequestAndAbortsItInTheEngine) {
  SamplingParams sampling;
  sampling.stop = {"END"};
  std::vector<GenerationOutput> outputs;
  const auto aborts = RunBytes(sampling, "xyENxEND", &outputs);
  // "EN" is held back until the next byte shows it is not "END"; then released.
  ASSERT_EQ(outputs.size(), 8u);
  EXPECT_EQ(Text(outputs), "xyENx");
  EXPECT_EQ(outputs.back().finish_reason, FinishReason::kStop);
  EXPECT_EQ(outputs.back().num_output_tokens, 8);  // the stop string's tokens were generated
  for (size_t i = 0; i + 1 < aborts.size(); ++i) EXPECT_THAT(aborts[i], IsEmpty()) << i;
  EXPECT_THAT(aborts.back(), ElementsAre(kId));  // the engine still runs it: abort there
  EXPECT_EQ(aborts_at_final_, 1u);               // ... told before the final output

  // Tokens the engine generated before the abort reached it: discarded, never counted.
  EXPECT_THAT(Step(100, {Token(kId, 'z'), Token(kId, 'z', FinishReason::kLength)}), IsEmpty());
  EXPECT_EQ(outputs.size(), 8u);
  const LlmMetricsSnapshot m = metrics_.Snapshot();
  EXPECT_EQ(m.generation_tokens, 8u);
  EXPECT_EQ(m.requests_finished_stop, 1u);
  EXPECT_EQ(m.requests_finished_length, 0u);
}

TEST_F(OutputProcessorTest, AStopStringOnTheEnginesLastTokenNeedsNoAbort) {
  SamplingParams sampling;
  sampling.stop = {"cd"};
  sampling.include_stop_str_in_output = true;
  std::vector<GenerationOutput> outputs;
  const auto aborts = RunBytes(sampling, "abcd", &outputs, FinishReason::kLength);
  EXPECT_EQ(Text(outputs), "abcd");
  EXPECT_EQ(outputs.back().finish_reason, FinishReason::kStop);  // the stop string wins
  for (const auto& a : aborts) EXPECT_THAT(a, IsEmpty());
}

TEST_F(OutputProcessorTest, ACharacterSplitAcrossTokensIsReleasedWhole) {
  std::vector<GenerationOutput> outputs;
  // "é" (C3 A9) then "😀" (F0 9F 98 80), one byte per token.
  RunBytes(SamplingParams{}, "\xC3\xA9\xF0\x9F\x98\x80", &outputs);
  ASSERT_EQ(outputs.size(), 6u);
  EXPECT_EQ(outputs[0].text, "");
  EXPECT_EQ(outputs[1].text, "\xC3\xA9");
  EXPECT_EQ(outputs[2].text, "");
  EXPECT_EQ(outputs[4].text, "");
  EXPECT_EQ(outputs[5].text, "\xF0\x9F\x98\x80");
  // Every output carries its token even when its text waits.
  for (const GenerationOutput& o : outputs) EXPECT_EQ(o.token_ids.size(), 1u);
}

TEST_F(OutputProcessorTest, AnIncompleteCharacterAtTheEndBecomesReplacementCharacters) {
  std::vector<GenerationOutput> outputs;
  RunBytes(SamplingParams{}, "a\xE2\x82", &outputs, FinishReason::kLength);
  EXPECT_EQ(Text(outputs), "a\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD per byte that never completed
}

TEST_F(OutputProcessorTest, LogprobsStayAlignedWithTheirTokensWhileTextIsHeldBack) {
  SamplingParams sampling;
  sampling.logprobs = true;
  sampling.top_logprobs = 2;
  sampling.stop = {"zz"};
  std::vector<GenerationOutput> outputs;
  std::vector<NewOutputRequest> added;
  added.push_back(Added(kId, sampling, &outputs));
  Step(0, {}, std::move(added));
  const std::vector<TokenLogprob> top_a = {{'a', -0.1f}, {'b', -2.5f}};
  const std::vector<TokenLogprob> top_b = {{'c', -0.5f}, {'b', -0.9f}};
  Step(10, {Token(kId, 'a', FinishReason::kNone, -0.1f, top_a)});
  Step(20, {Token(kId, 'b', FinishReason::kStop, -0.9f, top_b)});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].text, "");  // held: could start "zz"
  EXPECT_THAT(outputs[0].token_ids, ElementsAre('a'));
  EXPECT_THAT(outputs[0].logprobs, ElementsAre(-0.1f));
  ASSERT_EQ(outputs[0].top_logprobs.size(), 1u);
  EXPECT_EQ(outputs[0].top_logprobs[0][1].token_id, 'b');
  EXPECT_EQ(outputs[1].text, "ab");
  EXPECT_THAT(outputs[1].token_ids, ElementsAre('b'));
  EXPECT_THAT(outputs[1].logprobs, ElementsAre(-0.9f));
  ASSERT_EQ(outputs[1].top_logprobs.size(), 1u);
  EXPECT_EQ(outputs[1].top_logprobs[0][0].token_id, 'c');
}

TEST_F(OutputProcessorTest, WithoutLogprobsNoneAreSent) {
  std::vector<GenerationOutput> outputs;
  RunBytes(SamplingParams{}, "ab", &outputs, FinishReason::kStop);
  for (const GenerationOutput& o : outputs) EXPECT_THAT(o.logprobs, IsEmpty());
}

TEST_F(OutputProcessorTest, AnEngineAbortEndsTheRequestWithItsErrorAndNoHeldText) {
  SamplingParams sampling;
  sampling.stop = {"XY"};
  std::vector<GenerationOutput> outputs;
  RunBytes(sampling, "ab", &outputs);  // "b" held back
  EngineRequestOutput aborted;
  aborted.id = kId;
  aborted.finish_reason = FinishReason::kAbort;
  aborted.error = absl::DeadlineExceededError("deadline");
  EXPECT_THAT(Step(50, {std::move(aborted)}), IsEmpty());
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(Text(outputs), "a");
  EXPECT_EQ(outputs.back().finish_reason, FinishReason::kAbort);
  EXPECT_EQ(outputs.back().error.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(outputs.back().num_output_tokens, 2);
  EXPECT_EQ(metrics_.Snapshot().requests_aborted, 1u);
}

TEST_F(OutputProcessorTest, ARequestAbortedBeforeItsFirstStepEndsInTheSameHandOff) {
  std::vector<GenerationOutput> outputs;
  std::vector<NewOutputRequest> added;
  added.push_back(Added(kId, SamplingParams{}, &outputs));
  EngineRequestOutput aborted;
  aborted.id = kId;
  aborted.finish_reason = FinishReason::kAbort;
  aborted.error = absl::CancelledError("gone");
  Step(0, {std::move(aborted)}, std::move(added));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].finish_reason, FinishReason::kAbort);
  EXPECT_EQ(outputs[0].num_output_tokens, 0);
  EXPECT_EQ(outputs[0].queue_seconds, 0);
  EXPECT_EQ(outputs[0].timings.scheduled, TimePoint{});
  const LlmMetricsSnapshot m = metrics_.Snapshot();
  EXPECT_EQ(m.generation_tokens, 0u);
  EXPECT_EQ(m.prompt_tokens, 0u);  // counted with a first token only
  EXPECT_EQ(m.e2e_request_latency.count, 1u);
}

TEST_F(OutputProcessorTest, RequestsInOneStepAreIndependent) {
  SamplingParams stop_at_b;
  stop_at_b.stop = {"b"};
  std::vector<GenerationOutput> first, second;
  std::vector<NewOutputRequest> added;
  added.push_back(Added(1, stop_at_b, &first));
  added.push_back(Added(2, SamplingParams{}, &second));
  Step(0, {}, std::move(added));
  EXPECT_THAT(Step(10, {Token(1, 'b'), Token(2, 'b')}), ElementsAre(1u));
  EXPECT_THAT(Step(20, {Token(1, 'c'), Token(2, 'c', FinishReason::kLength)}), IsEmpty());
  EXPECT_EQ(Text(first), "");
  EXPECT_EQ(first.back().finish_reason, FinishReason::kStop);
  EXPECT_EQ(Text(second), "bc");
  EXPECT_EQ(second.back().finish_reason, FinishReason::kLength);
  EXPECT_EQ(metrics_.Snapshot().generation_tokens, 3u);
}

}  // namespace
}  // namespace infera::llm
