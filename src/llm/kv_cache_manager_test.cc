#include "llm/kv_cache_manager.h"

#include <numeric>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;

LlmRequest Request(RequestId id, std::vector<int32_t> tokens) {
  LlmRequest r;
  r.id = id;
  r.prompt_token_ids = tokens;
  r.all_token_ids = std::move(tokens);
  return r;
}

std::vector<int32_t> Range(int32_t from, int32_t to) {
  std::vector<int32_t> v(to - from);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(KvCacheManagerTest, AllocatesBlocksForChunksAndFreesTailFirst) {
  KvCacheManager kv(/*num_blocks=*/6, /*block_size=*/4, /*enable_prefix_caching=*/false);
  LlmRequest r = Request(1, Range(100, 110));
  ASSERT_TRUE(kv.Allocate(r, 0, 6));  // chunk 1: tokens 0..5
  EXPECT_THAT(kv.BlockIds(1), ElementsAre(0, 1));
  ASSERT_TRUE(kv.Allocate(r, 6, 4));  // chunk 2: tokens 6..9
  EXPECT_THAT(kv.BlockIds(1), ElementsAre(0, 1, 2));
  ASSERT_TRUE(kv.Allocate(r, 10, 1));  // token 10 fits in block 2
  EXPECT_THAT(kv.BlockIds(1), ElementsAre(0, 1, 2));
  kv.Free(r);
  EXPECT_THAT(kv.pool().FreeQueue(), ElementsAre(3, 4, 5, 2, 1, 0));
}

TEST(KvCacheManagerTest, RefusesWithoutChangingAnything) {
  KvCacheManager kv(3, 4, false);
  LlmRequest a = Request(1, Range(0, 8)), b = Request(2, Range(0, 8));
  ASSERT_TRUE(kv.Allocate(a, 0, 8));
  EXPECT_FALSE(kv.Allocate(b, 0, 8));
  EXPECT_TRUE(kv.BlockIds(2).empty());
  EXPECT_EQ(kv.pool().num_free_blocks(), 1);
}

TEST(KvCacheManagerTest, SharesFullPrefixBlocksAndCountsHits) {
  KvCacheManager kv(8, 4, true);
  LlmRequest a = Request(1, Range(0, 10));
  auto none = kv.FindCachedPrefix(a);
  EXPECT_EQ(none.num_tokens, 0);
  ASSERT_TRUE(kv.Allocate(a, 0, 10, &none));
  EXPECT_THAT(kv.BlockIds(1), ElementsAre(0, 1, 2));  // blocks 0, 1 full and cached

  std::vector<int32_t> tokens = Range(0, 8);
  tokens.push_back(77);
  LlmRequest b = Request(2, tokens);  // shares 8 tokens = 2 full blocks
  auto prefix = kv.FindCachedPrefix(b);
  EXPECT_THAT(prefix.blocks, ElementsAre(0, 1));
  EXPECT_EQ(prefix.num_tokens, 8);
  ASSERT_TRUE(kv.Allocate(b, 8, 1, &prefix));
  EXPECT_THAT(kv.BlockIds(2), ElementsAre(0, 1, 3));
  EXPECT_EQ(kv.pool().ref_count(0), 2);
  EXPECT_EQ(kv.prefix_cache_queries(), 10 + 9);
  EXPECT_EQ(kv.prefix_cache_hits(), 8);
}

TEST(KvCacheManagerTest, NeverHitsTheWholePrompt) {
  KvCacheManager kv(8, 4, true);
  LlmRequest a = Request(1, Range(0, 8));
  auto p = kv.FindCachedPrefix(a);
  ASSERT_TRUE(kv.Allocate(a, 0, 8, &p));
  LlmRequest same = Request(2, Range(0, 8));
  // The last token must be recomputed for its logits: only the first block hits.
  EXPECT_THAT(kv.FindCachedPrefix(same).blocks, ElementsAre(0));
}

TEST(KvCacheManagerTest, ReleasedPrefixStaysCachedUntilEvicted) {
  KvCacheManager kv(4, 2, true);
  LlmRequest a = Request(1, {1, 2, 3, 4, 5});
  auto p = kv.FindCachedPrefix(a);
  ASSERT_TRUE(kv.Allocate(a, 0, 5, &p));  // blocks 0 [1,2] 1 [3,4] 2 [5]
  kv.Free(a);                              // queue: 3, 2, 1, 0
  EXPECT_THAT(kv.pool().FreeQueue(), ElementsAre(3, 2, 1, 0));
  LlmRequest b = Request(2, {1, 2, 3, 4, 9, 9});
  auto hit = kv.FindCachedPrefix(b);
  EXPECT_THAT(hit.blocks, ElementsAre(0, 1));
  ASSERT_TRUE(kv.Allocate(b, 4, 2, &hit));
  EXPECT_THAT(kv.BlockIds(2), ElementsAre(0, 1, 3));  // new block from the head
  // A third request that needs 2 new blocks evicts block 2 (LRU head), not the prefix.
  LlmRequest c = Request(3, {7, 7, 7});
  auto none = kv.FindCachedPrefix(c);
  EXPECT_FALSE(kv.Allocate(c, 0, 3, &none));  // only block 2 is free
  EXPECT_EQ(kv.pool().num_free_blocks(), 1);
}

}  // namespace
}  // namespace infera::llm

namespace infera::llm {
namespace {

// Speculative draft tokens get slots (lookahead) but never make a block a cache entry:
// only blocks wholly below num_computed + num_new_tokens are cached.
TEST(KvCacheManagerTest, LookaheadSlotsAreAllocatedButNeverCached) {
  KvCacheManager kv(8, 4, true);
  LlmRequest a = Request(1, Range(0, 7));
  auto none = kv.FindCachedPrefix(a);
  ASSERT_TRUE(kv.Allocate(a, 0, 7, &none));  // block 0 full (cached), block 1 holds 3
  EXPECT_THAT(kv.BlockIds(1), ElementsAre(0, 1));
  a.all_token_ids.push_back(7);
  // The sampled token 7 plus 5 drafts: positions 7..12, blocks 1, 2, 3.
  ASSERT_TRUE(kv.Allocate(a, 7, 1, nullptr, /*num_lookahead_tokens=*/5));
  EXPECT_THAT(kv.BlockIds(1), ElementsAre(0, 1, 2, 3));
  // Blocks 0 and 1 (tokens 0..7, all verified) are cached; 2 and 3 (drafts) are not.
  LlmRequest b = Request(2, Range(0, 13));
  EXPECT_EQ(kv.FindCachedPrefix(b).num_tokens, 8);
  // All drafts rejected; the next step writes position 8 over the draft's slot.
  a.all_token_ids.push_back(99);
  ASSERT_TRUE(kv.Allocate(a, 8, 1));
  EXPECT_THAT(kv.BlockIds(1), ElementsAre(0, 1, 2, 3));  // nothing new: slots were kept
  EXPECT_EQ(kv.FindCachedPrefix(b).num_tokens, 8);
}

}  // namespace
}  // namespace infera::llm
