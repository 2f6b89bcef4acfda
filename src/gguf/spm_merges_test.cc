// SpmMergesFromScores: merges ranked by the target's score, splits at character
// boundaries into vocabulary entries only, non-mergeable targets skipped.
#include "gguf/spm_merges.h"

#include "gtest/gtest.h"

namespace infera::gguf {
namespace {

using Merges = std::vector<std::pair<std::string_view, std::string_view>>;

TEST(SpmMergesTest, RanksByTargetScoreThenSplitIds) {
  const std::vector<std::string_view> tokens = {"a", "b", "c", "ab", "bc", "abc", "<s>", "é", "aé"};
  const std::vector<float> scores = {0, 0, 0, -2, -1, -3, 0, 0, -0.5f};
  std::vector<bool> mergeable(tokens.size(), true);
  mergeable[6] = false;  // control
  const Merges merges = SpmMergesFromScores(tokens, scores, mergeable);
  // aé (-0.5), bc (-1), ab (-2), abc (-3: a+bc before ab+c by the id of the left part).
  EXPECT_EQ(merges, (Merges{{"a", "é"}, {"b", "c"}, {"a", "b"}, {"a", "bc"}, {"ab", "c"}}));
}

TEST(SpmMergesTest, NeverCutsInsideACharacter) {
  // "é" is two bytes; "\xC3" alone is a (malformed) vocabulary entry and must not be used.
  const std::vector<std::string_view> tokens = {"\xC3", "\xA9", "é"};
  const Merges merges = SpmMergesFromScores(tokens, {0, 0, 0}, {true, true, true});
  EXPECT_TRUE(merges.empty());
}

}  // namespace
}  // namespace infera::gguf
