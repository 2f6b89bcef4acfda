// DraftModelProposer on a recording fake draft model: what each batched draft step
// computes (catch-up from the first position the draft's cache and the request differ,
// then single-token steps), the drafts and q it leaves on the requests, the limits, and
// the freeing of draft state (finish, preemption, a failed step).
#include "llm/draft_model_proposer.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kVocab = 32;
constexpr int32_t kBlocks = 16;
constexpr int32_t kBlockSize = 4;

struct Seen {
  RequestId id;
  int64_t start;
  std::vector<int32_t> tokens;
  bool sample;
};

// Next token: last + 1 (mod kVocab), clearly the argmax; records every step.
class RecordingModel : public ModelRunner {
 public:
  explicit RecordingModel(std::vector<std::vector<Seen>>* steps) : steps_(steps) {}
  absl::StatusOr<ModelRunnerOutput> Execute(const SchedulerOutput& step) override {
    if (fail) return absl::InternalError("draft step failed");
    ModelRunnerOutput out;
    out.vocab_size = kVocab;
    std::vector<Seen> seen;
    for (const ScheduledSequence& seq : step.sequences) {
      const int64_t end = seq.start_position + static_cast<int64_t>(seq.token_ids.size());
      EXPECT_GE(static_cast<int64_t>(seq.block_ids.size()) * kBlockSize, end) << "block table too short";
      seen.push_back({seq.request_id, seq.start_position, seq.token_ids, seq.sample});
      if (!seq.sample) continue;
      std::vector<float> row(kVocab, 0.0f);
      row[(seq.token_ids.back() + 1) % kVocab] = 3.0f;
      out.logits.insert(out.logits.end(), row.begin(), row.end());
    }
    steps_->push_back(std::move(seen));
    return out;
  }
  int64_t vocab_size() const override { return kVocab; }
  bool fail = false;

 private:
  std::vector<std::vector<Seen>>* steps_;
};

std::unique_ptr<LlmRequest> Request(RequestId id, std::vector<int32_t> prompt, double temperature = 0) {
  auto r = std::make_unique<LlmRequest>();
  r->id = id;
  r->prompt_token_ids = prompt;
  r->all_token_ids = prompt;
  r->sampling.temperature = temperature;
  r->sampling.max_tokens = 100;
  r->status = RequestStatus::kRunning;
  return r;
}

class DraftModelProposerTest : public ::testing::Test {
 protected:
  DraftModelProposerTest() {
    auto model = std::make_unique<RecordingModel>(&steps_);
    model_ = model.get();
    proposer_ = std::make_unique<DraftModelProposer>(std::move(model), kBlocks, kBlockSize, /*max_model_len=*/40,
                                                     /*max_catch_up_tokens=*/512);
  }
  std::vector<std::vector<Seen>> steps_;
  RecordingModel* model_;
  std::unique_ptr<DraftModelProposer> proposer_;
};

TEST_F(DraftModelProposerTest, NewRequestCatchesUpItsWholeContextThenFeedsEachDraft) {
  auto r = Request(1, {5, 6, 7});
  ASSERT_TRUE(proposer_->Propose({r.get()}, {3}).ok());
  EXPECT_THAT(r->draft_token_ids, ElementsAre(8, 9, 10));
  EXPECT_THAT(r->draft_probs, IsEmpty());  // greedy: no q
  ASSERT_EQ(steps_.size(), 3u);            // catch-up + k - 1 single-token steps
  EXPECT_EQ(steps_[0][0].start, 0);
  EXPECT_THAT(steps_[0][0].tokens, ElementsAre(5, 6, 7));
  EXPECT_EQ(steps_[1][0].start, 3);
  EXPECT_THAT(steps_[1][0].tokens, ElementsAre(8));
  EXPECT_EQ(steps_[2][0].start, 4);
  EXPECT_THAT(steps_[2][0].tokens, ElementsAre(9));
  EXPECT_THAT(r->all_token_ids, ElementsAre(5, 6, 7));  // drafts never join the tokens
}

TEST_F(DraftModelProposerTest, CatchUpStartsWhereTheDraftsCacheAndTheRequestDiffer) {
  auto r = Request(1, {5, 6, 7});
  ASSERT_TRUE(proposer_->Propose({r.get()}, {3}).ok());  // draft cache: 5 6 7 8 9
  // Verification accepted 8, then the target emitted 20 (rejecting 9).
  r->all_token_ids = {5, 6, 7, 8, 20};
  steps_.clear();
  ASSERT_TRUE(proposer_->Propose({r.get()}, {2}).ok());
  EXPECT_EQ(steps_[0][0].start, 4);
  EXPECT_THAT(steps_[0][0].tokens, ElementsAre(20));
  EXPECT_THAT(r->draft_token_ids, ElementsAre(21, 22));
  // Every draft accepted plus the bonus: the draft never saw the last draft (22) nor the bonus.
  r->all_token_ids = {5, 6, 7, 8, 20, 21, 22, 23};
  steps_.clear();
  ASSERT_TRUE(proposer_->Propose({r.get()}, {1}).ok());
  ASSERT_EQ(steps_.size(), 1u);
  EXPECT_EQ(steps_[0][0].start, 6);
  EXPECT_THAT(steps_[0][0].tokens, ElementsAre(22, 23));
  // Nothing new at all (the same context proposed twice): the last token is recomputed
  // for its logits.
  steps_.clear();
  ASSERT_TRUE(proposer_->Propose({r.get()}, {1}).ok());
  EXPECT_EQ(steps_[0][0].start, 7);
  EXPECT_THAT(steps_[0][0].tokens, ElementsAre(23));
}

TEST_F(DraftModelProposerTest, AllRequestsShareEachStep) {
  auto a = Request(1, {1, 2});
  auto b = Request(2, {10, 11, 12});
  ASSERT_TRUE(proposer_->Propose({a.get(), b.get()}, {1, 3}).ok());
  ASSERT_EQ(steps_.size(), 3u);
  ASSERT_EQ(steps_[0].size(), 2u);  // one catch-up forward for both
  EXPECT_EQ(steps_[0][0].id, 1u);
  EXPECT_EQ(steps_[0][1].id, 2u);
  EXPECT_EQ(steps_[1].size(), 1u);  // a wanted one draft
  EXPECT_THAT(a->draft_token_ids, ElementsAre(3));
  EXPECT_THAT(b->draft_token_ids, ElementsAre(13, 14, 15));
}

TEST_F(DraftModelProposerTest, RetainFreesFinishedAndPreemptedRequests) {
  const int32_t free_at_start = proposer_->num_free_blocks();
  auto a = Request(1, {1, 2, 3, 4, 5, 6});
  auto b = Request(2, {7, 8});
  ASSERT_TRUE(proposer_->Propose({a.get(), b.get()}, {4, 4}).ok());
  EXPECT_EQ(proposer_->num_tracked(), 2u);
  EXPECT_LT(proposer_->num_free_blocks(), free_at_start);
  proposer_->Retain([](RequestId id) { return id == 2; });  // 1 finished or preempted
  EXPECT_EQ(proposer_->num_tracked(), 1u);
  proposer_->Retain([](RequestId) { return false; });
  EXPECT_EQ(proposer_->num_tracked(), 0u);
  EXPECT_EQ(proposer_->num_free_blocks(), free_at_start);
  // Back after a preemption: the whole context again.
  steps_.clear();
  ASSERT_TRUE(proposer_->Propose({a.get()}, {1}).ok());
  EXPECT_EQ(steps_[0][0].start, 0);
  EXPECT_EQ(steps_[0][0].tokens.size(), 6u);
}

TEST_F(DraftModelProposerTest, APreemptionSinceTheLastProposalRecomputesTheContext) {
  auto r = Request(1, {1, 2, 3});
  ASSERT_TRUE(proposer_->Propose({r.get()}, {2}).ok());
  r->num_preemptions = 1;
  steps_.clear();
  ASSERT_TRUE(proposer_->Propose({r.get()}, {2}).ok());
  EXPECT_EQ(steps_[0][0].start, 0);
}

TEST_F(DraftModelProposerTest, NoDraftPastMaxTokensOrMaxModelLen) {
  auto r = Request(1, {1, 2, 3});
  r->sampling.max_tokens = 2;  // two tokens left: one draft + the token after it
  ASSERT_TRUE(proposer_->Propose({r.get()}, {5}).ok());
  EXPECT_EQ(r->draft_token_ids.size(), 1u);
  auto long_one = Request(2, std::vector<int32_t>(37, 4));  // max_model_len 40
  ASSERT_TRUE(proposer_->Propose({long_one.get()}, {5}).ok());
  EXPECT_EQ(long_one->draft_token_ids.size(), 2u);
  auto full = Request(3, std::vector<int32_t>(39, 4));
  steps_.clear();
  ASSERT_TRUE(proposer_->Propose({full.get()}, {5}).ok());
  EXPECT_THAT(full->draft_token_ids, IsEmpty());
  EXPECT_TRUE(steps_.empty());
}

TEST_F(DraftModelProposerTest, AFullDraftCacheGivesNoDrafts) {
  DraftModelProposer proposer(std::make_unique<RecordingModel>(&steps_), kBlocks, kBlockSize, /*max_model_len=*/1000,
                              /*max_catch_up_tokens=*/512);
  auto big = Request(1, std::vector<int32_t>(kBlocks * kBlockSize - 8, 1));  // 58 slots: 15 blocks
  auto other = Request(2, std::vector<int32_t>(12, 2));                      // 14 slots: 4 blocks
  ASSERT_TRUE(proposer.Propose({big.get(), other.get()}, {3, 3}).ok());
  EXPECT_EQ(big->draft_token_ids.size(), 3u);
  EXPECT_THAT(other->draft_token_ids, IsEmpty());
}

// A context longer than the catch-up budget is computed in chunks over several calls,
// without drafts (and without logits) until the last chunk; the budget is shared.
TEST_F(DraftModelProposerTest, LongContextsCatchUpInChunks) {
  DraftModelProposer proposer(std::make_unique<RecordingModel>(&steps_), kBlocks, kBlockSize, /*max_model_len=*/1000,
                              /*max_catch_up_tokens=*/4);
  auto r = Request(1, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  ASSERT_TRUE(proposer.Propose({r.get()}, {2}).ok());
  EXPECT_THAT(r->draft_token_ids, IsEmpty());
  ASSERT_EQ(steps_.size(), 1u);
  EXPECT_EQ(steps_[0][0].start, 0);
  EXPECT_THAT(steps_[0][0].tokens, ElementsAre(1, 2, 3, 4));
  EXPECT_FALSE(steps_[0][0].sample);
  ASSERT_TRUE(proposer.Propose({r.get()}, {2}).ok());
  EXPECT_THAT(steps_[1][0].tokens, ElementsAre(5, 6, 7, 8));
  EXPECT_THAT(r->draft_token_ids, IsEmpty());
  // The last chunk, and a short request sharing the budget: both get drafts.
  auto b = Request(2, {20});
  ASSERT_TRUE(proposer.Propose({r.get(), b.get()}, {2, 2}).ok());
  EXPECT_EQ(steps_[2][0].start, 8);
  EXPECT_THAT(steps_[2][0].tokens, ElementsAre(9, 10));
  EXPECT_TRUE(steps_[2][0].sample);
  EXPECT_THAT(r->draft_token_ids, ElementsAre(11, 12));
  EXPECT_THAT(b->draft_token_ids, ElementsAre(21, 22));
  // A spent budget: the request after it gets no drafts this call.
  auto c = Request(3, {1, 2, 3, 4});
  auto d = Request(4, {30});
  ASSERT_TRUE(proposer.Propose({c.get(), d.get()}, {1, 1}).ok());
  EXPECT_EQ(c->draft_token_ids.size(), 1u);
  EXPECT_THAT(d->draft_token_ids, IsEmpty());
}

TEST_F(DraftModelProposerTest, SampledRequestsKeepTheDraftsDistribution) {
  auto r = Request(1, {1, 2, 3}, /*temperature=*/1.0);
  r->rng.seed(7);
  ASSERT_TRUE(proposer_->Propose({r.get()}, {3}).ok());
  ASSERT_EQ(r->draft_token_ids.size(), 3u);
  ASSERT_EQ(r->draft_probs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    double sum = 0;
    for (float p : r->draft_probs[i]) sum += p;
    EXPECT_NEAR(sum, 1.0, 1e-5);
    EXPECT_GT(r->draft_probs[i][r->draft_token_ids[i]], 0.0f);
  }
  // The peak of row i (after token t) is t + 1: e^3 / (e^3 + 31).
  const int32_t after = steps_[0][0].tokens.back() + 1;
  EXPECT_NEAR(r->draft_probs[0][after], std::exp(3.0) / (std::exp(3.0) + kVocab - 1), 1e-5);
}

TEST_F(DraftModelProposerTest, AFailedStepProposesNothingAndFreesEverything) {
  const int32_t free_at_start = proposer_->num_free_blocks();
  auto r = Request(1, {1, 2, 3});
  model_->fail = true;
  EXPECT_FALSE(proposer_->Propose({r.get()}, {3}).ok());
  EXPECT_THAT(r->draft_token_ids, IsEmpty());
  EXPECT_EQ(proposer_->num_tracked(), 0u);
  EXPECT_EQ(proposer_->num_free_blocks(), free_at_start);
  model_->fail = false;
  EXPECT_TRUE(proposer_->Propose({r.get()}, {3}).ok());
  EXPECT_EQ(r->draft_token_ids.size(), 3u);
}

}  // namespace
}  // namespace infera::llm
