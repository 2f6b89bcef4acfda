// The engine with speculative decoding (n-gram prompt lookup) against a fake paged model:
// greedy output identical to non-speculative decoding and to a reference, through
// rejections, stop conditions inside an accepted run, the prefix cache and preemption.
//
// FakePagedModel keeps a token id per KV slot (what the real runner keeps K/V for):
// every scheduled token is written into the slot its block table names, and the logits
// at a position are computed from the tokens read back through the block table. So a
// rejected draft counted as computed, or a prefix-cache block holding a rejected
// draft's slot, feeds a wrong context to later positions and changes the output.
#include <algorithm>
#include <atomic>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/llm_engine.h"
#include "llm/test_tokenizers.h"

namespace infera::llm {
namespace {

constexpr int64_t kVocab = 262;
constexpr int32_t kEos = 260;
constexpr int32_t kBlockSize = 4;

// The model's next token after context c[0..p]: a function of the last two tokens with a
// small range (so outputs repeat and n-gram lookup finds matches) and a position term
// (so some proposals are wrong and get rejected).
int32_t Next(const std::vector<int32_t>& c) {
  const size_t p = c.size() - 1;
  const int32_t prev = p > 0 ? c[p - 1] : 0;
  int32_t next = 'a' + (c[p] * 7 + prev % 2) % 11;
  if (p % 13 == 0) next = 'a' + (next + 5 - 'a') % 11;
  return next;
}

std::vector<int32_t> Reference(std::vector<int32_t> tokens, int64_t max_tokens, const std::vector<int32_t>& stops) {
  std::vector<int32_t> out;
  while (static_cast<int64_t>(out.size()) < max_tokens) {
    const int32_t t = Next(tokens);
    tokens.push_back(t);
    out.push_back(t);
    if (std::find(stops.begin(), stops.end(), t) != stops.end()) break;
  }
  return out;
}

// With `wrong_every` > 0 (a draft model that disagrees sometimes): at positions that are
// multiples of it the next token is shifted.
class FakePagedModel : public ModelRunner {
 public:
  explicit FakePagedModel(int32_t num_blocks, int wrong_every = 0)
      : slots_(static_cast<size_t>(num_blocks) * kBlockSize, -1), wrong_every_(wrong_every) {}
  absl::StatusOr<ModelRunnerOutput> Execute(const SchedulerOutput& step) override {
    ModelRunnerOutput out;
    out.vocab_size = kVocab;
    for (const ScheduledSequence& seq : step.sequences) {
      for (size_t i = 0; i < seq.token_ids.size(); ++i) slots_[Slot(seq, seq.start_position + i)] = seq.token_ids[i];
    }
    for (const ScheduledSequence& seq : step.sequences) {
      const int64_t end = seq.start_position + static_cast<int64_t>(seq.token_ids.size());
      for (int64_t pos = end - seq.NumLogitsRows(); pos < end; ++pos) {
        std::vector<int32_t> context;
        for (int64_t q = 0; q <= pos; ++q) context.push_back(slots_[Slot(seq, q)]);
        std::vector<float> row(kVocab, 0.0f);
        int32_t next = Next(context);
        if (wrong_every_ > 0 && pos % wrong_every_ == 0) next = 'a' + (next + 3 - 'a') % 11;
        row[next] = 10.0f;
        out.logits.insert(out.logits.end(), row.begin(), row.end());
      }
    }
    return out;
  }
  int64_t vocab_size() const override { return kVocab; }

 private:
  static size_t Slot(const ScheduledSequence& seq, int64_t pos) {
    return static_cast<size_t>(seq.block_ids[pos / kBlockSize]) * kBlockSize + pos % kBlockSize;
  }
  std::vector<int32_t> slots_;
  const int wrong_every_;
};

// The engine's speculation: off, n-gram lookup, or a draft model (the fake, exact or
// wrong at every `wrong_every`-th position).
struct Speculation {
  int32_t k = 0;
  bool draft_model = false;
  int wrong_every = 0;
};

struct Result {
  absl::Mutex mu;
  std::vector<int32_t> tokens;
  FinishReason reason = FinishReason::kNone;
  void Wait() {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(+[](Result* r) { return r->reason != FinishReason::kNone; }, this));
  }
  OutputCallback Callback() {
    return [this](RequestOutput o) {
      absl::MutexLock lock(&mu);
      tokens.insert(tokens.end(), o.token_ids.begin(), o.token_ids.end());
      if (o.finish_reason != FinishReason::kNone) reason = o.finish_reason;
    };
  }
};

struct Case {
  std::string prompt;
  int64_t max_tokens = 40;
  std::vector<int32_t> stop_token_ids = {};
  int64_t min_tokens = 0;
};

class SpecDecodeEngineTest : public ::testing::Test {
 protected:
  void Start(int32_t num_speculative_tokens, int32_t num_blocks = 128, int64_t max_batched = 64) {
    Start(Speculation{num_speculative_tokens}, num_blocks, max_batched);
  }
  void Start(Speculation spec, int32_t num_blocks = 128, int64_t max_batched = 64) {
    const int32_t num_speculative_tokens = spec.k;
    engine_.reset();
    tokenizer_ = std::move(*Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer)));
    EngineOptions o;
    o.num_blocks = num_blocks;
    o.block_size = kBlockSize;
    o.scheduler.max_model_len = 128;
    o.scheduler.max_num_batched_tokens = max_batched;
    o.scheduler.eos_token_ids = {kEos};
    std::unique_ptr<DraftModelProposer> draft;
    if (num_speculative_tokens > 0 && spec.draft_model) {
      o.speculative.method = SpeculativeConfig::Method::kDraftModel;
      o.speculative.num_speculative_tokens = num_speculative_tokens;
      draft = std::make_unique<DraftModelProposer>(std::make_unique<FakePagedModel>(num_blocks, spec.wrong_every),
                                                   num_blocks, kBlockSize, o.scheduler.max_model_len,
                                                   o.scheduler.max_num_batched_tokens);
    } else if (num_speculative_tokens > 0) {
      o.speculative.method = SpeculativeConfig::Method::kNgram;
      o.speculative.num_speculative_tokens = num_speculative_tokens;
      o.speculative.ngram_prompt_lookup_max = 3;
      o.speculative.ngram_prompt_lookup_min = 1;
    }
    auto engine =
        LlmEngine::Create(o, std::make_unique<FakePagedModel>(num_blocks), tokenizer_.get(), std::move(draft));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }
  // Runs the cases concurrently; their output tokens.
  std::vector<std::vector<int32_t>> Run(const std::vector<Case>& cases) {
    std::vector<std::unique_ptr<Result>> results;
    for (const Case& c : cases) {
      GenerateRequest r;
      r.prompt_token_ids = tokenizer_->Encode(c.prompt, false);
      r.sampling.temperature = 0;
      r.sampling.max_tokens = c.max_tokens;
      r.sampling.min_tokens = c.min_tokens;
      r.sampling.stop_token_ids = c.stop_token_ids;
      results.push_back(std::make_unique<Result>());
      EXPECT_TRUE(engine_->AddRequest(std::move(r), results.back()->Callback()).ok());
    }
    std::vector<std::vector<int32_t>> outputs;
    for (auto& r : results) {
      r->Wait();
      outputs.push_back(r->tokens);
    }
    return outputs;
  }
  std::vector<int32_t> Encode(std::string_view text) { return tokenizer_->Encode(text, false); }

  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<LlmEngine> engine_;
};

const std::vector<Case> kCases = {{"abcabcabcabc", 40, {}},
                                  {"the cat and the cat and the", 50, {}},
                                  {"xyz", 30, {}},
                                  {"1, 2, 3, 4, 1, 2, 3, 4", 60, {}}};

TEST_F(SpecDecodeEngineTest, GreedyOutputIsIdenticalWithAndWithoutSpeculation) {
  Start(0);
  const auto plain = Run(kCases);
  for (int32_t k : {1, 3, 5}) {
    Start(k);
    EXPECT_EQ(Run(kCases), plain) << "num_speculative_tokens " << k;
    const LlmMetricsSnapshot m = engine_->Metrics();
    EXPECT_GT(m.spec_decode_num_accepted_tokens, 0u);
    EXPECT_LT(m.spec_decode_num_accepted_tokens, m.spec_decode_num_draft_tokens) << "no rejection exercised";
    EXPECT_GT(m.spec_decode_num_emitted_tokens, m.spec_decode_num_accepted_tokens);
    // generation tokens are what clients got; speculation emitted most of them.
    EXPECT_LE(m.spec_decode_num_emitted_tokens, m.generation_tokens);
  }
  for (size_t i = 0; i < kCases.size(); ++i) {
    EXPECT_EQ(plain[i], Reference(Encode(kCases[i].prompt), kCases[i].max_tokens, {kEos})) << kCases[i].prompt;
  }
}

// EOS-like stop token ids and max_tokens inside an accepted run: the output ends at the
// first stop token / exactly at max_tokens, as without speculation.
TEST_F(SpecDecodeEngineTest, StopConditionsApplyPerAcceptedToken) {
  const std::vector<Case> cases = {{"abcabcabcabc", 40, {'d'}},
                                   {"the cat and the cat and the", 7, {}},
                                   {"1, 2, 3, 4, 1, 2, 3, 4", 50, {'c'}},
                                   {"abcabcabcabc", 40, {'d'}, /*min_tokens=*/20}};
  Start(0);
  const auto plain = Run(cases);
  Start(4);
  const auto spec = Run(cases);
  EXPECT_EQ(spec, plain);
  EXPECT_EQ(spec[0], Reference(Encode(cases[0].prompt), 40, {'d'}));
  EXPECT_EQ(spec[0].size(), 18u);  // ends at the first 'd', inside a run of accepted drafts
  EXPECT_EQ(spec[1].size(), 7u);
  EXPECT_EQ(spec[2], Reference(Encode(cases[2].prompt), 50, {'c'}));
  EXPECT_GE(spec[3].size(), 20u);
  EXPECT_GT(engine_->Metrics().spec_decode_num_accepted_tokens, 0u);
}

// A second request whose prompt is the first one's prompt + output hits the blocks the
// first wrote while speculating: they must hold only verified tokens.
TEST_F(SpecDecodeEngineTest, PrefixCacheHoldsOnlyVerifiedTokens) {
  Start(5);
  const Case first = {"the cat and the cat and the", 60, {}};
  const auto a = Run({first});
  std::string second(first.prompt);
  second.append(a[0].begin(), a[0].end());
  const Case c2 = {second, 30, {}};
  const auto b = Run({c2});
  EXPECT_EQ(b[0], Reference(Encode(second), 30, {kEos}));
  const LlmMetricsSnapshot m = engine_->Metrics();
  EXPECT_GT(m.prefix_cache_hits, 40u);
  EXPECT_GT(m.spec_decode_num_draft_tokens, m.spec_decode_num_accepted_tokens);
}

// A tiny cache: requests are preempted (drafts dropped, blocks freed, recomputed) and
// still produce the reference output. Whether they meet in the cache depends on how soon
// the engine thread takes the first one (about 1 run in 500 finished it before the others
// arrived): each run checks its outputs, and runs repeat until one was preempted.
TEST_F(SpecDecodeEngineTest, PreemptionKeepsOutputsExact) {
  bool preempted = false;
  for (int run = 0; run < 20 && !preempted; ++run) {
    Start(4, /*num_blocks=*/32, /*max_batched=*/32);
    const auto spec = Run(kCases);
    for (size_t i = 0; i < kCases.size(); ++i) {
      EXPECT_EQ(spec[i], Reference(Encode(kCases[i].prompt), kCases[i].max_tokens, {kEos})) << kCases[i].prompt;
    }
    EXPECT_GT(engine_->Metrics().spec_decode_num_accepted_tokens, 0u);
    preempted = engine_->Metrics().preemptions > 0;
  }
  EXPECT_TRUE(preempted) << "no run of 20 preempted a request";
}


// A draft model (draft_model_proposer.h): the target itself as its draft accepts every
// draft; a draft that is wrong at every 7th position gets rejections; greedy output is
// the plain model's either way, for k = 1, 3, 5.
TEST_F(SpecDecodeEngineTest, DraftModelGreedyOutputIsIdentical) {
  Start(0);
  const auto plain = Run(kCases);
  for (int32_t k : {1, 3, 5}) {
    Start(Speculation{k, /*draft_model=*/true, /*wrong_every=*/0});
    EXPECT_EQ(Run(kCases), plain) << "self-draft, k " << k;
    LlmMetricsSnapshot m = engine_->Metrics();
    EXPECT_GT(m.spec_decode_num_draft_tokens, 0u);
    EXPECT_EQ(m.spec_decode_num_accepted_tokens, m.spec_decode_num_draft_tokens) << "k " << k;
    Start(Speculation{k, /*draft_model=*/true, /*wrong_every=*/7});
    EXPECT_EQ(Run(kCases), plain) << "wrong draft, k " << k;
    m = engine_->Metrics();
    EXPECT_GT(m.spec_decode_num_accepted_tokens, 0u);
    EXPECT_LT(m.spec_decode_num_accepted_tokens, m.spec_decode_num_draft_tokens) << "no rejection, k " << k;
  }
}

TEST_F(SpecDecodeEngineTest, DraftModelStopConditionsAndMinTokens) {
  const std::vector<Case> cases = {{"abcabcabcabc", 40, {'d'}},
                                   {"the cat and the cat and the", 7, {}},
                                   {"abcabcabcabc", 40, {'d'}, /*min_tokens=*/20}};
  Start(0);
  const auto plain = Run(cases);
  Start(Speculation{4, true, 5});
  EXPECT_EQ(Run(cases), plain);
}

// A tiny cache: target requests are preempted (their draft state freed and recomputed).
TEST_F(SpecDecodeEngineTest, DraftModelPreemptionKeepsOutputsExact) {
  bool preempted = false;
  for (int run = 0; run < 20 && !preempted; ++run) {
    Start(Speculation{4, true, 7}, /*num_blocks=*/32, /*max_batched=*/32);
    const auto spec = Run(kCases);
    for (size_t i = 0; i < kCases.size(); ++i) {
      EXPECT_EQ(spec[i], Reference(Encode(kCases[i].prompt), kCases[i].max_tokens, {kEos})) << kCases[i].prompt;
    }
    preempted = engine_->Metrics().preemptions > 0;
  }
  EXPECT_TRUE(preempted) << "no run of 20 preempted a request";
}

}  // namespace
}  // namespace infera::llm
