// GenerationJob: admissions and outputs in any order, streamed and whole answers,
// refusals, failures and cancellation — driven through the callbacks the job hands to
// ModelVersion::Generate, its answer recorded by a fake ResponseWriter.
#include "openai/generation_job.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "openai/fake_text_generator.h"
#include "openai/openai_errors.h"
#include "rapidjson/document.h"

namespace infera::openai {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FakeTextGenerator;

// What the job wrote. Shared by the test and the writer the job owns.
struct Answer {
  std::optional<HttpResponse> sent;
  std::optional<HttpResponse> head;
  std::vector<std::string> chunks;
  bool stream_finished = false;
  int calls_after_end = 0;  // anything written after the answer was complete
};

class RecordingWriter : public ResponseWriter {
 public:
  explicit RecordingWriter(std::shared_ptr<Answer> answer) : a_(std::move(answer)) {}
  void Send(HttpResponse response) override {
    if (Ended()) ++a_->calls_after_end;
    a_->sent = std::move(response);
  }
  void StartStream(HttpResponse head) override {
    if (Ended()) ++a_->calls_after_end;
    a_->head = std::move(head);
  }
  void Write(std::string chunk) override {
    if (!a_->head || a_->stream_finished) ++a_->calls_after_end;
    a_->chunks.push_back(std::move(chunk));
  }
  void FinishStream() override {
    if (!a_->head || a_->stream_finished) ++a_->calls_after_end;
    a_->stream_finished = true;
  }

 private:
  bool Ended() const { return a_->sent.has_value() || a_->head.has_value(); }
  std::shared_ptr<Answer> a_;
};

GenerationOutput Out(std::string text, std::vector<int32_t> ids, FinishReason finish = FinishReason::kNone) {
  GenerationOutput o;
  o.text = std::move(text);
  o.token_ids = std::move(ids);
  o.finish_reason = finish;
  o.num_prompt_tokens = 3;
  o.num_output_tokens = static_cast<int64_t>(o.token_ids.size());
  o.num_cached_tokens = 1;
  return o;
}

// The callbacks of the job's first `n` choices.
std::vector<GenerationCallbacks> CallbacksOf(GenerationJob& job, size_t n) {
  std::vector<GenerationCallbacks> callbacks;
  for (size_t i = 0; i < n; ++i) callbacks.push_back(job.Callbacks(i));
  return callbacks;
}

// The JSON of each SSE event ("data: <json>\n\n"), "[DONE]" kept as is.
std::vector<std::string> Events(const std::vector<std::string>& chunks) {
  std::vector<std::string> events;
  for (const std::string& c : chunks) {
    EXPECT_TRUE(c.starts_with("data: ") && c.ends_with("\n\n")) << c;
    events.push_back(c.substr(6, c.size() - 8));
  }
  return events;
}

class GenerationJobTest : public ::testing::Test {
 protected:
  std::shared_ptr<GenerationJob> Job(GenerationJob::Options options,
                                     std::shared_ptr<const CancellationToken> client = nullptr) {
    options.id = "cmpl-1";
    options.model = "m";
    options.created = 7;
    return std::make_shared<GenerationJob>(options, TokenRenderer(model_, false), ModelHandle(), std::nullopt,
                                           std::make_unique<RecordingWriter>(answer_), std::move(client));
  }
  static GenerationJob::Options Options(Endpoint endpoint, bool stream, int n, size_t choices) {
    GenerationJob::Options o;
    o.endpoint = endpoint;
    o.stream = stream;
    o.n = n;
    o.num_choices = choices;
    return o;
  }

  FakeTextGenerator model_;
  std::shared_ptr<Answer> answer_ = std::make_shared<Answer>();
};

// Outputs may come before their admission; the body waits for every choice's admission
// and final output, and sums usage (prompt tokens once per prompt).
TEST_F(GenerationJobTest, AWholeAnswerWaitsForEveryChoiceAndSumsUsage) {
  auto job = Job(Options(Endpoint::kCompletions, false, /*n=*/2, /*choices=*/4));
  std::vector<GenerationCallbacks> c = CallbacksOf(*job, 4);
  c[1].output(Out("b", {1}, FinishReason::kStop));  // before its admission
  for (size_t i : {0u, 2u, 3u}) c[i].admitted(absl::OkStatus(), "");
  c[0].output(Out("a", {0}));
  c[0].output(Out("cd", {2}, FinishReason::kLength));
  c[2].output(Out("!", {4}, FinishReason::kStop));
  c[3].output(Out("", {}, FinishReason::kStop));
  EXPECT_FALSE(answer_->sent.has_value());  // choice 1 is not admitted yet
  c[1].admitted(absl::OkStatus(), "");
  ASSERT_TRUE(answer_->sent.has_value());
  EXPECT_EQ(answer_->sent->status, 200);
  ChoiceDelta d0, d1, d2, d3;
  d0.text = "acd";
  d0.finish_reason = FinishReason::kLength;
  d1.index = 1;
  d1.text = "b";
  d1.finish_reason = FinishReason::kStop;
  d2.index = 2;
  d2.text = "!";
  d2.finish_reason = FinishReason::kStop;
  d3.index = 3;
  d3.finish_reason = FinishReason::kStop;
  // 2 prompts × 3 prompt tokens, 1 cached each; each final output counts its own tokens here.
  EXPECT_EQ(answer_->sent->body, CompletionJson("cmpl-1", 7, "m", {d0, d1, d2, d3}, Usage{6, 3, 2}));
  EXPECT_FALSE(answer_->head.has_value());
  EXPECT_EQ(answer_->calls_after_end, 0);
}

// Chunks produced before the stream's head wait for it; the echoed prompt goes first and
// shifts text offsets; [DONE] after the usage chunk, once, after the last choice.
TEST_F(GenerationJobTest, AStreamStartsWhenEveryChoiceIsAdmittedEchoFirst) {
  GenerationJob::Options options = Options(Endpoint::kCompletions, true, 1, 1);
  options.include_usage = true;
  options.logprobs = true;
  auto job = Job(options);
  GenerationCallbacks c = job->Callbacks(0);
  GenerationOutput early = Out("a", {0});
  early.logprobs = {-0.5f};
  c.output(early);
  EXPECT_FALSE(answer_->head.has_value());
  c.admitted(absl::OkStatus(), "hé ");
  ASSERT_TRUE(answer_->head.has_value());
  EXPECT_EQ(answer_->head->status, 200);
  EXPECT_EQ(answer_->head->content_type, "text/event-stream");
  c.output(Out("b", {1}, FinishReason::kStop));
  ASSERT_TRUE(answer_->stream_finished);
  const std::vector<std::string> events = Events(answer_->chunks);
  ASSERT_EQ(events.size(), 5u);
  ChoiceDelta echo;
  echo.text = "hé ";
  EXPECT_EQ(events[0], CompletionChunkJson("cmpl-1", 7, "m", echo));
  EXPECT_THAT(events[1], HasSubstr(R"("text":"a","logprobs":{"tokens":["a"],"token_logprobs":[-0.5],)"
                                   R"("top_logprobs":[{"a":-0.5}],"text_offset":[3]})"));  // after 3 code points
  EXPECT_THAT(events[2], HasSubstr(R"("text":"b","logprobs":null,"finish_reason":"stop")"));
  EXPECT_EQ(events[3], UsageChunkJson("cmpl-1", 7, "m", "text_completion", Usage{3, 1, 1}));
  EXPECT_EQ(events[4], "[DONE]");
  EXPECT_EQ(answer_->calls_after_end, 0);
}

TEST_F(GenerationJobTest, ChatChunksCarryTheRoleOnlyInEachChoicesFirst) {
  auto job = Job(Options(Endpoint::kChat, true, 2, 2));
  std::vector<GenerationCallbacks> c = CallbacksOf(*job, 2);
  c[0].admitted(absl::OkStatus(), "");
  c[1].admitted(absl::OkStatus(), "");
  c[1].output(Out("x", {0}));
  c[0].output(Out("y", {1}));
  c[1].output(Out("z", {1}, FinishReason::kStop));
  c[0].output(Out("", {}, FinishReason::kLength));
  const std::vector<std::string> events = Events(answer_->chunks);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_THAT(events[0], HasSubstr(R"("index":1,"delta":{"role":"assistant","content":"x"})"));
  EXPECT_THAT(events[1], HasSubstr(R"("index":0,"delta":{"role":"assistant","content":"y"})"));
  EXPECT_THAT(events[2], HasSubstr(R"("index":1,"delta":{"content":"z"},"logprobs":null,"finish_reason":"stop")"));
  EXPECT_THAT(events[3], HasSubstr(R"("index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length")"));
  EXPECT_EQ(events[4], "[DONE]");
}

// The first refusal answers at once and cancels the siblings; nothing follows it.
TEST_F(GenerationJobTest, ARefusalAnswersItsErrorAndCancelsTheSiblings) {
  auto client = std::make_shared<CancellationToken>();
  auto job = Job(Options(Endpoint::kCompletions, true, 1, 3), client);
  std::shared_ptr<const CancellationToken> token = job->cancellation();
  ASSERT_NE(token, client);  // several choices: the job's own token
  std::vector<GenerationCallbacks> c = CallbacksOf(*job, 3);
  c[0].admitted(absl::OkStatus(), "");
  c[0].output(Out("a", {0}));
  EXPECT_FALSE(token->IsCancelled());
  c[1].admitted(absl::InvalidArgumentError("prompt too long"), "");
  ASSERT_TRUE(answer_->sent.has_value());
  EXPECT_EQ(answer_->sent->status, 400);
  EXPECT_EQ(answer_->sent->body, OpenAiErrorJson(400, "prompt too long"));
  EXPECT_TRUE(token->IsCancelled());
  EXPECT_FALSE(client->IsCancelled());
  c[2].admitted(absl::ResourceExhaustedError("queue full"), "");
  c[0].output(Out("", {}, FinishReason::kAbort));
  EXPECT_EQ(answer_->sent->status, 400);
  EXPECT_FALSE(answer_->head.has_value());
  EXPECT_TRUE(answer_->chunks.empty());
  EXPECT_EQ(answer_->calls_after_end, 0);
}

TEST_F(GenerationJobTest, TheClientLeavingCancelsEveryChoice) {
  auto client = std::make_shared<CancellationToken>();
  auto several = Job(Options(Endpoint::kChat, false, 2, 2), client);
  auto one = Job(Options(Endpoint::kChat, false, 1, 1), client);
  EXPECT_EQ(one->cancellation(), client);  // one choice carries the client's token itself
  EXPECT_FALSE(several->cancellation()->IsCancelled());
  client->Cancel();
  EXPECT_TRUE(several->cancellation()->IsCancelled());
}

TEST_F(GenerationJobTest, AFailedOrAbortedChoiceFailsAWholeAnswer) {
  auto job = Job(Options(Endpoint::kCompletions, false, 2, 2));
  std::vector<GenerationCallbacks> c = CallbacksOf(*job, 2);
  c[0].admitted(absl::OkStatus(), "");
  c[1].admitted(absl::OkStatus(), "");
  c[0].output(Out("", {}, FinishReason::kAbort));
  GenerationOutput failed = Out("", {}, FinishReason::kError);
  failed.error = absl::InternalError("model step failed");
  c[1].output(failed);
  ASSERT_TRUE(answer_->sent.has_value());
  EXPECT_EQ(answer_->sent->status, 500);  // an error outranks a cancellation
  EXPECT_THAT(answer_->sent->body, HasSubstr("model step failed"));

  auto aborted = std::make_shared<Answer>();
  auto job2 = std::make_shared<GenerationJob>(Options(Endpoint::kChat, false, 1, 1), TokenRenderer(model_, false),
                                              ModelHandle(), std::nullopt, std::make_unique<RecordingWriter>(aborted),
                                              nullptr);
  GenerationCallbacks only = job2->Callbacks(0);
  only.admitted(absl::OkStatus(), "");
  only.output(Out("", {}, FinishReason::kAbort));
  ASSERT_TRUE(aborted->sent.has_value());
  EXPECT_EQ(aborted->sent->status, 499);
  EXPECT_THAT(aborted->sent->body, HasSubstr("request cancelled"));
}

TEST_F(GenerationJobTest, AChoiceThatFailsMidStreamSendsAnErrorEvent) {
  auto job = Job(Options(Endpoint::kCompletions, true, 1, 1));
  GenerationCallbacks c = job->Callbacks(0);
  c.admitted(absl::OkStatus(), "");
  c.output(Out("a", {0}));
  GenerationOutput failed = Out("", {}, FinishReason::kError);
  failed.error = absl::InternalError("boom");
  c.output(failed);
  const std::vector<std::string> events = Events(answer_->chunks);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_THAT(events[0], HasSubstr(R"("text":"a")"));
  EXPECT_EQ(events[1], OpenAiErrorJson(500, "boom"));
  EXPECT_EQ(events[2], "[DONE]");
  EXPECT_TRUE(answer_->stream_finished);
}

// Every choice refused before the stream began: one error answer, no stream.
TEST_F(GenerationJobTest, EveryChoiceRefusedIsOneErrorAnswer) {
  auto job = Job(Options(Endpoint::kChat, true, 2, 2));
  job->Callbacks(0).admitted(absl::UnavailableError("model is loading"), "");
  job->Callbacks(1).admitted(absl::UnavailableError("model is loading"), "");
  ASSERT_TRUE(answer_->sent.has_value());
  EXPECT_EQ(answer_->sent->status, 503);
  EXPECT_THAT(answer_->sent->headers, ElementsAre(std::make_pair(std::string("Retry-After"), std::string("1"))));
  EXPECT_FALSE(answer_->head.has_value());
  EXPECT_EQ(answer_->calls_after_end, 0);
}

// Admissions come from the prompt worker, outputs from the engine's thread, each choice
// independently: many choices delivered from a thread each make one complete answer.
TEST_F(GenerationJobTest, ChoicesDeliveredFromManyThreadsMakeOneAnswer) {
  for (bool stream : {false, true}) {
    answer_ = std::make_shared<Answer>();
    constexpr size_t kChoices = 8;
    auto job = Job(Options(Endpoint::kCompletions, stream, 2, kChoices));
    std::vector<GenerationCallbacks> c = CallbacksOf(*job, kChoices);
    job.reset();  // the callbacks keep it
    std::vector<std::thread> threads;
    for (size_t i = 0; i < kChoices; ++i) {
      threads.emplace_back([&c, i] {
        if (i % 2 == 0) c[i].admitted(absl::OkStatus(), "");  // before or after the outputs
        for (int k = 0; k < 3; ++k) c[i].output(Out("a", {0}));
        c[i].output(Out("b", {1}, FinishReason::kStop));
        if (i % 2 == 1) c[i].admitted(absl::OkStatus(), "");
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(answer_->calls_after_end, 0);
    if (!stream) {
      ASSERT_TRUE(answer_->sent.has_value());
      rapidjson::Document doc;
      doc.Parse(answer_->sent->body.c_str());
      ASSERT_EQ(doc["choices"].Size(), kChoices);
      for (rapidjson::SizeType i = 0; i < kChoices; ++i) {
        EXPECT_EQ(doc["choices"][i]["index"].GetInt(), static_cast<int>(i));
        EXPECT_STREQ(doc["choices"][i]["text"].GetString(), "aaab");
      }
      EXPECT_EQ(doc["usage"]["completion_tokens"].GetInt(), static_cast<int>(kChoices));
      continue;
    }
    ASSERT_TRUE(answer_->stream_finished);
    const std::vector<std::string> events = Events(answer_->chunks);
    ASSERT_EQ(events.size(), kChoices * 4 + 1);
    EXPECT_EQ(events.back(), "[DONE]");
    std::vector<std::string> text(kChoices);
    for (size_t e = 0; e + 1 < events.size(); ++e) {
      rapidjson::Document doc;
      doc.Parse(events[e].c_str());
      text[doc["choices"][0]["index"].GetInt()] += doc["choices"][0]["text"].GetString();
    }
    for (const std::string& t : text) EXPECT_EQ(t, "aaab");  // in order within a choice
  }
}

// Chat with tools: a streamed named call streams its arguments as delta.tool_calls; the
// content before a Hermes call streams as content and the call follows whole, with
// finish_reason tool_calls; unstreamed, the message carries tool_calls.
TEST_F(GenerationJobTest, StreamsToolCallsAsDeltas) {
  GenerationJob::Options o = Options(Endpoint::kChat, /*stream=*/true, 1, 1);
  o.tool_choice = ToolChoiceMode::kNamed;
  o.tool_name = "get";
  auto job = Job(o);
  auto cb = CallbacksOf(*job, 1);
  cb[0].admitted(absl::OkStatus(), "");
  cb[0].output(Out("{\"a\"", {1}));
  cb[0].output(Out(": 1}", {2}, FinishReason::kStop));
  std::vector<std::string> events = Events(answer_->chunks);
  ASSERT_EQ(events.size(), 4u) << ::testing::PrintToString(events);
  EXPECT_THAT(events[0], HasSubstr(R"("delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_)"));
  EXPECT_THAT(events[0], HasSubstr(R"("type":"function","function":{"name":"get","arguments":""}}]})"));
  EXPECT_THAT(events[1], HasSubstr(R"("tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}])"));
  EXPECT_THAT(events[2], HasSubstr(R"("arguments":": 1}"}}]},"logprobs":null,"finish_reason":"stop")"));
  EXPECT_EQ(events[3], "[DONE]");
}

TEST_F(GenerationJobTest, AutoToolCallsStreamedAndWhole) {
  for (bool stream : {true, false}) {
    answer_ = std::make_shared<Answer>();
    GenerationJob::Options o = Options(Endpoint::kChat, stream, 1, 1);
    o.tool_choice = ToolChoiceMode::kAuto;
    o.tool_format = ToolCallFormat::kHermes;
    auto job = Job(o);
    auto cb = CallbacksOf(*job, 1);
    cb[0].admitted(absl::OkStatus(), "");
    cb[0].output(Out("Let me see.\n<tool", {1}));
    cb[0].output(Out("_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n</tool_call>", {2}, FinishReason::kStop));
    if (!stream) {
      ASSERT_TRUE(answer_->sent.has_value());
      EXPECT_THAT(answer_->sent->body,
                  HasSubstr(R"("message":{"role":"assistant","content":"Let me see.","tool_calls":[{"id":"call_)"));
      EXPECT_THAT(answer_->sent->body, HasSubstr(R"("function":{"name":"f","arguments":"{\"x\":1}"}}]})"));
      EXPECT_THAT(answer_->sent->body, HasSubstr(R"("finish_reason":"tool_calls")"));
      continue;
    }
    std::vector<std::string> events = Events(answer_->chunks);
    ASSERT_EQ(events.size(), 4u) << ::testing::PrintToString(events);
    EXPECT_THAT(events[0], HasSubstr(R"("delta":{"role":"assistant","content":"Let me see.\n"})"));  // "<tool" held
    EXPECT_THAT(events[1], HasSubstr(R"("function":{"name":"f","arguments":""})"));
    EXPECT_THAT(events[2], HasSubstr(R"("arguments":"{\"x\":1}"}}]},"logprobs":null,"finish_reason":"tool_calls")"));
    EXPECT_EQ(events[3], "[DONE]");
  }
}

}  // namespace
}  // namespace infera::openai
