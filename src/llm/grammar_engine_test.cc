// Structured output through the LLM engine (grammar_constraint.h): AddRequest compiles
// the grammar (a bad one is InvalidArgument), every output follows it whatever the
// model proposes, through preemption, with the metrics recorded.
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grammar/grammar_matcher.h"
#include "gtest/gtest.h"
#include "llm/llm_engine.h"
#include "llm/test_tokenizers.h"

namespace infera::llm {
namespace {

using ::testing::HasSubstr;

constexpr int32_t kEos = 260;

// A model that knows nothing of grammars: noisy logits that favour 'x' and EOS.
class NoiseRunner : public ModelRunner {
 public:
  absl::StatusOr<ModelRunnerOutput> Execute(const SchedulerOutput& step) override {
    ModelRunnerOutput out;
    out.vocab_size = vocab_size();
    std::normal_distribution<float> noise(0.0f, 2.0f);
    for (const auto& seq : step.sequences) {
      if (!seq.sample) continue;
      for (int64_t i = 0; i < out.vocab_size; ++i) out.logits.push_back(noise(rng_));
      out.logits[out.logits.size() - out.vocab_size + 'x'] = 8.0f;
      out.logits[out.logits.size() - out.vocab_size + kEos] = 6.0f;
    }
    return out;
  }
  int64_t vocab_size() const override { return 264; }  // two padded rows past the tokenizer

 private:
  std::mt19937_64 rng_{5};
};

struct Result {
  absl::Mutex mu;
  std::string text;
  FinishReason reason = FinishReason::kNone;
  OutputCallback Callback() {
    return [this](RequestOutput o) {
      absl::MutexLock lock(&mu);
      text += o.text;
      if (o.finish_reason != FinishReason::kNone) reason = o.finish_reason;
    };
  }
  void Wait() {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(+[](Result* r) { return r->reason != FinishReason::kNone; }, this));
  }
};

constexpr char kPerson[] =
    R"(root ::= "{\"name\": \"" [a-z]{1,8} "\", \"age\": " [1-9] [0-9]{0,2} ", \"tags\": [" (tag (", " tag){0,2})? "]}"
tag ::= "\"" [a-z]{1,5} "\"")";

bool Valid(const std::string& text) {
  auto g = grammar::CompiledGrammar::Compile(kPerson, nullptr);
  grammar::GrammarMatcher m(*g);
  return m.AcceptBytes(text) && m.CanEnd();
}

class GrammarEngineTest : public ::testing::Test {
 protected:
  void Start(int32_t num_blocks = 256) {
    tokenizer_ = std::move(*Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer)));
    EngineOptions o;
    o.num_blocks = num_blocks;
    o.block_size = 4;
    o.scheduler.max_model_len = 128;
    o.scheduler.max_num_batched_tokens = 128;
    o.scheduler.eos_token_ids = {kEos};
    auto engine = LlmEngine::Create(o, std::make_unique<NoiseRunner>(), tokenizer_.get());
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }
  GenerateRequest Request(double temperature, uint64_t seed, std::string grammar = kPerson) {
    GenerateRequest r;
    r.prompt_token_ids = tokenizer_->Encode("Describe a person as JSON:", false);
    r.sampling.temperature = temperature;
    r.sampling.seed = seed;
    r.sampling.max_tokens = 100;
    r.sampling.grammar = std::move(grammar);
    r.sampling.constraint_kind = "json_schema";
    return r;
  }
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<LlmEngine> engine_;
};

TEST_F(GrammarEngineTest, ABadGrammarIsInvalidArgument) {
  Start();
  Result r;
  absl::Status s = engine_->AddRequest(Request(0, 1, "root ::= \"a\" undefined_rule"), r.Callback());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("grammar: line 1, column 14: undefined rule 'undefined_rule'"));
  EXPECT_EQ(engine_->GrammarMetrics().constrained_requests, 0u);
}

TEST_F(GrammarEngineTest, GreedyOutputFollowsTheGrammarAndStops) {
  Start();
  Result r;
  ASSERT_TRUE(engine_->AddRequest(Request(0, 1), r.Callback()).ok());
  r.Wait();
  EXPECT_EQ(r.reason, FinishReason::kStop);
  EXPECT_TRUE(Valid(r.text)) << r.text;
  const LlmMetrics::GrammarStats g = engine_->GrammarMetrics();
  EXPECT_EQ(g.constrained_requests, 1u);
  EXPECT_EQ(g.mask_time.count, engine_->Metrics().generation_tokens);  // every token, the forced EOS too
}

TEST_F(GrammarEngineTest, EverySampledOutputParses) {
  Start();
  std::vector<std::unique_ptr<Result>> results;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    results.push_back(std::make_unique<Result>());
    GenerateRequest req = Request(seed % 3 == 0 ? 0.0 : 1.2, seed);
    if (seed % 4 == 1) req.sampling.top_p = 0.8;
    if (seed % 4 == 2) req.sampling.top_k = 5;
    if (seed % 5 == 3) req.sampling.repetition_penalty = 1.3;
    ASSERT_TRUE(engine_->AddRequest(std::move(req), results.back()->Callback()).ok());
  }
  for (auto& r : results) {
    r->Wait();
    EXPECT_EQ(r->reason, FinishReason::kStop);
    EXPECT_TRUE(Valid(r->text)) << r->text;
  }
  EXPECT_EQ(engine_->GrammarMetrics().constrained_requests, 24u);
}

TEST_F(GrammarEngineTest, PreemptedRequestsKeepTheirMatcher) {
  Start(/*num_blocks=*/32);  // 128 tokens: eight requests of ~60 cannot all run
  std::vector<std::unique_ptr<Result>> results;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    results.push_back(std::make_unique<Result>());
    ASSERT_TRUE(engine_->AddRequest(Request(1.0, seed), results.back()->Callback()).ok());
  }
  for (auto& r : results) {
    r->Wait();
    EXPECT_EQ(r->reason, FinishReason::kStop);
    EXPECT_TRUE(Valid(r->text)) << r->text;
  }
  EXPECT_GT(engine_->Metrics().preemptions, 0u);
}

TEST_F(GrammarEngineTest, UnconstrainedRequestsAreUntouched) {
  Start();
  Result r;
  GenerateRequest req = Request(0, 1, "");
  req.sampling.max_tokens = 5;
  ASSERT_TRUE(engine_->AddRequest(std::move(req), r.Callback()).ok());
  r.Wait();
  EXPECT_EQ(r.reason, FinishReason::kLength);
  EXPECT_EQ(r.text, "xxxxx");
  EXPECT_EQ(engine_->GrammarMetrics().constrained_requests, 0u);
  EXPECT_EQ(engine_->GrammarMetrics().mask_time.count, 0u);
}

// What a grammar sees of each vocabulary family: the bytes each id writes mid-text.
TEST(GrammarVocabularyTest, ByteLevelAndSentencePieceTokensAsBytes) {
  auto bpe = *Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer));
  auto v = GrammarVocabulary(*bpe, 264, {kEos});
  EXPECT_EQ(v->size(), 264);
  EXPECT_EQ(v->bytes('a'), "a");
  EXPECT_EQ(v->bytes(0xE6), "\xE6");  // one byte of a multi-byte character
  EXPECT_EQ(v->bytes(257), " th");     // "Ġth"
  EXPECT_EQ(v->bytes(kEos), "");       // special: only through the end-token rule
  EXPECT_EQ(v->bytes(261), "");        // special
  EXPECT_EQ(v->bytes(262), "");        // padded logit rows
  EXPECT_TRUE(v->IsEnd(kEos));

  auto sp = *Tokenizer::FromJson(testing::SentencePieceTokenizerJson());
  auto w = GrammarVocabulary(*sp, 275, {2});
  EXPECT_EQ(w->bytes(259), " ");       // "▁"
  EXPECT_EQ(w->bytes(271), " hello");  // "▁hello"
  EXPECT_EQ(w->bytes(3 + 0x41), "A");  // byte fallback <0x41>
  EXPECT_EQ(w->bytes(3 + 0xC3), "\xC3");
  EXPECT_EQ(w->bytes(0), "");  // <unk>, <s>, </s>: special
  EXPECT_EQ(w->bytes(1), "");
  EXPECT_EQ(w->bytes(2), "");
  // A SentencePiece model under a grammar: " hello" as one token or as pieces.
  auto g = grammar::CompiledGrammar::Compile(R"(root ::= " hello" " world"?)", w);
  ASSERT_TRUE(g.ok());
  grammar::GrammarMatcher m(*g);
  EXPECT_TRUE(m.AcceptToken(271));
  EXPECT_TRUE(m.AcceptToken(2));  // EOS: the grammar may end here
  EXPECT_TRUE(m.AcceptToken(274));  // "▁wor"
  EXPECT_FALSE(m.AcceptToken(2));
}

TEST(GrammarVocabularyTest, OneCompilationForManyRequestsOnManyThreads) {
  auto bpe = *Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer));
  GrammarCompiler compiler(bpe.get(), 264, {kEos});
  ASSERT_TRUE(compiler.Compile(kPerson, nullptr).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) EXPECT_TRUE(compiler.Compile(kPerson, nullptr).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(compiler.compilations(), 1);
  EXPECT_EQ(compiler.Compile("root ::= ", nullptr).status().code(), absl::StatusCode::kOk);  // empty: matches ""
  EXPECT_EQ(compiler.Compile("root ::= [", nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace infera::llm
