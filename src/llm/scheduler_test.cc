#include "llm/scheduler.h"

#include <numeric>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A fake model runner: every sampled sequence gets token 50 + (its output count).
std::vector<RequestUpdate> RunStep(Scheduler& s, const SchedulerOutput& out) {
  std::vector<SampledToken> sampled;
  for (const auto& seq : out.sequences) {
    if (seq.sample) sampled.push_back({static_cast<int32_t>(50 + seq.start_position), 0.0f, {}});
  }
  return s.Update(out, sampled);
}

std::unique_ptr<LlmRequest> Request(RequestId id, int32_t num_prompt, int64_t max_tokens = 100,
                                    int priority = 0) {
  auto r = std::make_unique<LlmRequest>();
  r->id = id;
  r->prompt_token_ids.resize(num_prompt);
  std::iota(r->prompt_token_ids.begin(), r->prompt_token_ids.end(), static_cast<int32_t>(id * 1000));
  r->all_token_ids = r->prompt_token_ids;
  r->sampling.max_tokens = max_tokens;
  r->priority = priority;
  r->arrival_order = id;
  return r;
}

struct Seq {
  RequestId id;
  int64_t start, n;
  bool sample;
  std::vector<int32_t> blocks;
};
std::vector<Seq> Summary(const SchedulerOutput& out) {
  std::vector<Seq> v;
  for (const auto& s : out.sequences) {
    v.push_back({s.request_id, s.start_position, static_cast<int64_t>(s.token_ids.size()), s.sample, s.block_ids});
  }
  return v;
}
MATCHER_P5(IsSeq, id, start, n, sample, blocks, "") {
  return arg.id == static_cast<RequestId>(id) && arg.start == start && arg.n == n &&
         arg.sample == sample && arg.blocks == std::vector<int32_t>(blocks);
}

SchedulerConfig Config(int64_t budget, int32_t max_seqs = 8) {
  SchedulerConfig c;
  c.max_num_batched_tokens = budget;
  c.max_num_seqs = max_seqs;
  c.max_model_len = 64;
  c.eos_token_ids = {2};
  return c;
}

TEST(SchedulerTest, ChunkedPrefillMixesWithDecode) {
  KvCacheManager kv(16, 4, false);
  Scheduler s(Config(8), &kv);
  s.AddRequest(Request(1, 3));
  s.AddRequest(Request(2, 10));
  // Step 1: all of request 1 (3 tokens, sampled) and the first 5 tokens of request 2.
  SchedulerOutput out = s.Schedule();
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(1, 0, 3, true, std::vector<int>{0}),
                                        IsSeq(2, 0, 5, false, std::vector<int>{1, 2})));
  auto updates = RunStep(s, out);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].token->token_id, 50);
  // Step 2: request 1 decodes one token; request 2 finishes its prompt (5 more tokens).
  out = s.Schedule();
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(1, 3, 1, true, std::vector<int>{0}),
                                        IsSeq(2, 5, 5, true, std::vector<int>{1, 2, 3})));
  EXPECT_EQ(out.num_scheduled_tokens, 6);
  RunStep(s, out);
  out = s.Schedule();
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(1, 4, 1, true, std::vector<int>{0, 4}),
                                        IsSeq(2, 10, 1, true, std::vector<int>{1, 2, 3})));
}

TEST(SchedulerTest, WithoutChunkingALongPromptWaitsForAWholeBudget) {
  KvCacheManager kv(16, 4, false);
  SchedulerConfig c = Config(8);
  c.enable_chunked_prefill = false;
  Scheduler s(c, &kv);
  s.AddRequest(Request(1, 6));
  s.AddRequest(Request(2, 6));
  SchedulerOutput out = s.Schedule();
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(1, 0, 6, true, std::vector<int>{0, 1})));
  EXPECT_EQ(s.num_waiting(), 1u);
}

TEST(SchedulerTest, MaxNumSeqsCapsTheRunningSet) {
  KvCacheManager kv(16, 4, false);
  Scheduler s(Config(64, /*max_seqs=*/2), &kv);
  for (RequestId id = 1; id <= 3; ++id) s.AddRequest(Request(id, 2));
  SchedulerOutput out = s.Schedule();
  EXPECT_EQ(out.sequences.size(), 2u);
  EXPECT_EQ(s.num_running(), 2u);
  EXPECT_EQ(s.num_waiting(), 1u);
}

TEST(SchedulerTest, StopsOnMaxTokensEosAndIgnoresEosWhenAsked) {
  KvCacheManager kv(16, 4, false);
  Scheduler s(Config(64), &kv);
  s.AddRequest(Request(1, 2, /*max_tokens=*/2));
  auto eos = Request(2, 2);
  eos->sampling.stop_token_ids = {51};
  s.AddRequest(std::move(eos));
  auto u1 = RunStep(s, s.Schedule());  // both sample token 50 + 2 = 52
  EXPECT_EQ(u1[0].finish_reason, FinishReason::kNone);
  auto u2 = RunStep(s, s.Schedule());  // token 53 for both
  EXPECT_EQ(u2[0].finish_reason, FinishReason::kLength);
  EXPECT_EQ(u2[1].finish_reason, FinishReason::kNone);
  EXPECT_EQ(s.num_running(), 1u);
  EXPECT_EQ(kv.pool().num_free_blocks(), 15);  // request 1's block came back
}

TEST(SchedulerTest, PreemptsTheLatestAdmittedWhenBlocksRunOutAndRecomputesIt) {
  // 4 blocks of 2 tokens. Two requests of 3 prompt tokens take 2 blocks each.
  KvCacheManager kv(4, 2, false);
  Scheduler s(Config(64), &kv);
  s.AddRequest(Request(1, 3));
  s.AddRequest(Request(2, 3));
  SchedulerOutput out = s.Schedule();
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(1, 0, 3, true, std::vector<int>{0, 1}),
                                        IsSeq(2, 0, 3, true, std::vector<int>{2, 3})));
  RunStep(s, out);  // both now have 4 tokens, 3 computed: the 4th fits in their 2nd block
  out = s.Schedule();
  EXPECT_EQ(out.sequences.size(), 2u);
  RunStep(s, out);  // 5 tokens each: the next step needs a 3rd block each, none is free
  out = s.Schedule();
  // Request 1 needs a block: request 2 (latest admitted) is preempted, its blocks freed
  // tail first (3, 2); request 1 takes block 3.
  EXPECT_THAT(out.preempted, ElementsAre(2));
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(1, 4, 1, true, std::vector<int>{0, 1, 3})));
  EXPECT_EQ(s.num_waiting(), 1u);
  EXPECT_EQ(s.Find(2)->num_computed_tokens, 0);
  RunStep(s, out);
  // No admission in a step that preempted; the next step tries request 2 again: it needs
  // 3 blocks for its 5 tokens, only block 2 is free, so it keeps waiting.
  out = s.Schedule();
  EXPECT_THAT(out.preempted, IsEmpty());
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(1, 5, 1, true, std::vector<int>{0, 1, 3})));
  s.Finish(1, FinishReason::kAbort);
  // Request 2 is recomputed from scratch: prompt + its one output token.
  out = s.Schedule();
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(2, 0, 5, true, std::vector<int>{2, 3, 1})));
  EXPECT_EQ(out.sequences[0].token_ids.back(), 53);
}

TEST(SchedulerTest, PriorityPolicyAdmitsAndPreemptsByPriority) {
  KvCacheManager kv(4, 2, false);
  SchedulerConfig c = Config(64);
  c.policy = SchedulingPolicy::kPriority;
  Scheduler s(c, &kv);
  s.AddRequest(Request(1, 3, 100, /*priority=*/5));
  s.AddRequest(Request(2, 3, 100, /*priority=*/0));
  SchedulerOutput out = s.Schedule();
  // Request 2 (priority 0) is admitted first.
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(2, 0, 3, true, std::vector<int>{0, 1}),
                                        IsSeq(1, 0, 3, true, std::vector<int>{2, 3})));
  RunStep(s, out);
  RunStep(s, s.Schedule());
  out = s.Schedule();
  // Out of blocks: the victim is request 1 (worst priority), though admitted second.
  EXPECT_THAT(out.preempted, ElementsAre(1));
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(2, 4, 1, true, std::vector<int>{0, 1, 3})));
}

TEST(SchedulerTest, PrefixCacheHitsSkipComputedTokens) {
  KvCacheManager kv(16, 4, true);
  Scheduler s(Config(64), &kv);
  s.AddRequest(Request(1, 9));
  RunStep(s, s.Schedule());
  auto twin = Request(2, 9);
  twin->all_token_ids = twin->prompt_token_ids = s.Find(1)->prompt_token_ids;
  s.AddRequest(std::move(twin));
  SchedulerOutput out = s.Schedule();
  // Request 2 starts after the 8 cached tokens and shares blocks 0 and 1.
  EXPECT_THAT(Summary(out), ElementsAre(IsSeq(1, 9, 1, true, std::vector<int>{0, 1, 2}),
                                        IsSeq(2, 8, 1, true, std::vector<int>{0, 1, 3})));
  EXPECT_EQ(kv.prefix_cache_hits(), 8);
}

}  // namespace
}  // namespace infera::llm

namespace infera::llm {
namespace {

// A decoding request's draft tokens are scheduled after its sampled token (as lookahead:
// one step, 1 + drafts tokens, sample with num_draft_tokens); Update() counts only the
// accepted ones as computed and appends them with the sampled token.
TEST(SchedulerTest, SchedulesDraftsAndCountsOnlyAcceptedOnesAsComputed) {
  KvCacheManager kv(16, 4, true);
  Scheduler s(Config(64), &kv);
  s.AddRequest(Request(1, 3));
  RunStep(s, s.Schedule());  // prefill; samples 50
  LlmRequest* r = s.Find(1);
  r->draft_token_ids = {60, 61, 62};
  SchedulerOutput out = s.Schedule();
  ASSERT_EQ(out.sequences.size(), 1u);
  const ScheduledSequence& seq = out.sequences[0];
  EXPECT_THAT(seq.token_ids, ElementsAre(50, 60, 61, 62));
  EXPECT_EQ(seq.start_position, 3);
  EXPECT_EQ(seq.num_draft_tokens, 3);
  EXPECT_EQ(seq.NumLogitsRows(), 4);
  EXPECT_THAT(seq.block_ids, ElementsAre(0, 1));  // positions 3..6
  EXPECT_EQ(out.num_scheduled_tokens, 4);
  EXPECT_TRUE(r->draft_token_ids.empty());  // consumed
  // Draft 60 accepted, 61 rejected (70 sampled instead).
  auto updates = s.Update(out, std::vector<std::vector<SampledToken>>{{{60, 0, {}}, {70, 0, {}}}});
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].token->token_id, 60);
  EXPECT_EQ(updates[1].token->token_id, 70);
  EXPECT_EQ(r->num_computed_tokens, 5);  // 3 prompt + 50 + 60; not 61, 62
  EXPECT_THAT(std::vector<int32_t>(r->all_token_ids.begin() + 3, r->all_token_ids.end()), ElementsAre(50, 60, 70));
  out = s.Schedule();  // 70 is written at position 5, over the rejected draft 61
  EXPECT_EQ(out.sequences[0].start_position, 5);
  EXPECT_THAT(out.sequences[0].token_ids, ElementsAre(70));
}

// Drafts never go past max_tokens, and a stop token inside an accepted run ends it there.
TEST(SchedulerTest, DraftsStopAtMaxTokensAndStopTokens) {
  KvCacheManager kv(16, 4, false);
  Scheduler s(Config(64), &kv);
  auto req = Request(1, 3, /*max_tokens=*/3);
  req->sampling.stop_token_ids = {61};
  s.AddRequest(std::move(req));
  RunStep(s, s.Schedule());  // 1 output token
  s.Find(1)->draft_token_ids = {60, 61, 62, 63};
  SchedulerOutput out = s.Schedule();
  EXPECT_EQ(out.sequences[0].num_draft_tokens, 1);  // 2 more tokens at most: 1 draft + 1
  s.Find(1)->draft_token_ids.clear();
  auto updates = s.Update(out, std::vector<std::vector<SampledToken>>{{{60, 0, {}}, {61, 0, {}}}});
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[1].finish_reason, FinishReason::kStop);
  EXPECT_FALSE(s.HasUnfinished());

  s.AddRequest(Request(2, 3));
  RunStep(s, s.Schedule());
  s.Find(2)->draft_token_ids = {61, 2, 64};  // EOS (2) is the second draft
  out = s.Schedule();
  updates = s.Update(out, std::vector<std::vector<SampledToken>>{{{61, 0, {}}, {2, 0, {}}, {64, 0, {}}, {65, 0, {}}}});
  ASSERT_EQ(updates.size(), 2u);  // 61, then EOS ends it; 64 and 65 are dropped
  EXPECT_EQ(updates[1].finish_reason, FinishReason::kStop);
  EXPECT_FALSE(s.HasUnfinished());
}

// A preempted request drops its drafts with its blocks.
TEST(SchedulerTest, PreemptionDropsDrafts) {
  KvCacheManager kv(3, 4, false);
  Scheduler s(Config(64), &kv);
  s.AddRequest(Request(1, 4));
  s.AddRequest(Request(2, 4));
  RunStep(s, s.Schedule());  // blocks 0 and 1; both sampled
  s.Find(1)->draft_token_ids = {60, 61, 62, 63, 64};
  s.Find(2)->draft_token_ids = {70, 71, 72, 73, 74};
  SchedulerOutput out = s.Schedule();  // 1 takes block 2 (+1 block needed for 2): 2 preempted
  EXPECT_THAT(out.preempted, ElementsAre(2));
  EXPECT_TRUE(s.Find(2)->draft_token_ids.empty());
  EXPECT_EQ(s.Find(2)->num_computed_tokens, 0);
}

}  // namespace
}  // namespace infera::llm
