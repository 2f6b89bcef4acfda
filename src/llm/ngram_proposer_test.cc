#include "llm/ngram_proposer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<int32_t> Propose(int32_t min_n, int32_t max_n, int32_t k, std::vector<int32_t> tokens) {
  return NgramProposer(min_n, max_n, k).Propose(tokens);
}

TEST(NgramProposerTest, ProposesWhatFollowedTheSuffixEarlier) {
  EXPECT_THAT(Propose(1, 3, 3, {1, 2, 3, 4, 5, 1, 2, 3}), ElementsAre(4, 5, 1));
}

TEST(NgramProposerTest, NoMatchProposesNothing) {
  EXPECT_THAT(Propose(1, 3, 3, {1, 2, 3, 4}), IsEmpty());
  EXPECT_THAT(Propose(1, 3, 3, {7}), IsEmpty());
  EXPECT_THAT(Propose(1, 3, 3, {}), IsEmpty());
}

// "1 2" matches at 0 (followed by 3); the 1-gram "2" matches more recently at 4
// (followed by 4): the longest suffix wins.
TEST(NgramProposerTest, LongestSuffixWins) {
  EXPECT_THAT(Propose(1, 2, 2, {1, 2, 3, 9, 2, 4, 1, 2}), ElementsAre(3, 9));
}

TEST(NgramProposerTest, MostRecentOccurrenceOfTheSuffix) {
  EXPECT_THAT(Propose(1, 2, 2, {1, 2, 5, 1, 2, 6, 1, 2}), ElementsAre(6, 1));
}

TEST(NgramProposerTest, SuffixShorterThanMinDoesNotMatch) {
  EXPECT_THAT(Propose(2, 3, 2, {1, 2, 3, 9, 1}), IsEmpty());
  EXPECT_THAT(Propose(1, 3, 2, {1, 2, 3, 9, 1}), ElementsAre(2, 3));
}

// A match near the end continues through the proposal itself: full proposals on short
// periods.
TEST(NgramProposerTest, ShortPeriodsYieldFullProposals) {
  EXPECT_THAT(Propose(1, 2, 4, {5, 5, 5}), ElementsAre(5, 5, 5, 5));
  EXPECT_THAT(Propose(1, 2, 5, {1, 2, 1, 2}), ElementsAre(1, 2, 1, 2, 1));
  EXPECT_THAT(Propose(1, 3, 4, {8, 1, 2, 3, 1, 2, 3}), ElementsAre(1, 2, 3, 1));
}

}  // namespace
}  // namespace infera::llm
