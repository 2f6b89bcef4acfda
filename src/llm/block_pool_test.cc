#include "llm/block_pool.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;

BlockKey Key(uint64_t hash, std::vector<int32_t> tokens, uint64_t parent = 0) {
  return BlockKey{hash, parent, std::move(tokens)};
}

TEST(BlockPoolTest, AllocatesFromTheHeadAndReleasesToTheTail) {
  BlockPool pool(5);
  EXPECT_THAT(pool.FreeQueue(), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(pool.Allocate(2), ElementsAre(0, 1));
  EXPECT_EQ(pool.num_free_blocks(), 3);
  EXPECT_DOUBLE_EQ(pool.Usage(), 0.4);
  pool.Release({1, 0});  // a request's blocks, tail first
  EXPECT_THAT(pool.FreeQueue(), ElementsAre(2, 3, 4, 1, 0));
  EXPECT_THAT(pool.Allocate(4), ElementsAre(2, 3, 4, 1));
}

TEST(BlockPoolTest, SharedBlocksAreFreedWithTheLastReference) {
  BlockPool pool(3);
  EXPECT_THAT(pool.Allocate(1), ElementsAre(0));
  pool.Touch({0});
  EXPECT_EQ(pool.ref_count(0), 2);
  pool.Release({0});
  EXPECT_EQ(pool.num_free_blocks(), 2);
  pool.Release({0});
  EXPECT_THAT(pool.FreeQueue(), ElementsAre(1, 2, 0));
}

TEST(BlockPoolTest, CachedBlocksSurviveReleaseUntilEvictedInLruOrder) {
  BlockPool pool(3);
  std::vector<int32_t> blocks = pool.Allocate(3);
  pool.Cache(0, Key(10, {1, 2}));
  pool.Cache(1, Key(11, {3, 4}, 10));
  pool.Release({2, 1, 0});  // free queue 2, 1, 0
  EXPECT_EQ(pool.Lookup(Key(10, {1, 2})), 0);
  EXPECT_EQ(pool.Lookup(Key(11, {3, 4}, 10)), 1);
  // Same hash, other tokens: a collision never aliases.
  EXPECT_EQ(pool.Lookup(Key(10, {9, 9})), std::nullopt);
  EXPECT_THAT(pool.Allocate(2), ElementsAre(2, 1));  // evicts block 1's entry
  EXPECT_EQ(pool.num_evictions(), 1);
  EXPECT_EQ(pool.Lookup(Key(11, {3, 4}, 10)), std::nullopt);
  EXPECT_EQ(pool.Lookup(Key(10, {1, 2})), 0);
}

TEST(BlockPoolTest, TouchTakesAFreeCachedBlockOutOfTheMiddleOfTheQueue) {
  BlockPool pool(4);
  pool.Allocate(4);
  pool.Cache(2, Key(7, {5}));
  pool.Release({3, 2, 1, 0});
  pool.Touch({2});
  EXPECT_THAT(pool.FreeQueue(), ElementsAre(3, 1, 0));
  EXPECT_EQ(pool.ref_count(2), 1);
  EXPECT_TRUE(pool.is_cached(2));
}

TEST(BlockPoolTest, ResetCacheForgetsEveryEntry) {
  BlockPool pool(2);
  pool.Allocate(1);
  pool.Cache(0, Key(1, {1}));
  pool.ResetCache();
  EXPECT_EQ(pool.Lookup(Key(1, {1})), std::nullopt);
}

// The invariants hold in Release builds too (INFERA_CHECK, not assert): a double free or
// an allocation past the free blocks aborts instead of corrupting the free queue.
TEST(BlockPoolDeathTest, DoubleReleaseAborts) {
  BlockPool pool(3);
  const std::vector<int32_t> blocks = pool.Allocate(1);
  pool.Release(blocks);
  EXPECT_DEATH(pool.Release(blocks), "CHECK failed: .*releasing block 0 that is not in use");
}

TEST(BlockPoolDeathTest, AllocatingMoreThanIsFreeAborts) {
  BlockPool pool(2);
  EXPECT_DEATH(pool.Allocate(3), "CHECK failed: .*allocating 3 blocks with 2 free");
}

}  // namespace
}  // namespace infera::llm
