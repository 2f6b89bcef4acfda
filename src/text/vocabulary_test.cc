#include "text/vocabulary.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "text/packed_strings.h"
#include "text/tokenizer.h"

namespace infera::text {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(PackedStringsTest, KeepsEachStringIncludingEmptyAndBinaryOnes) {
  PackedStrings s;
  s.Append("hello");
  s.Append("");
  s.Append(std::string("a\0b", 3));
  s.Append(std::string(100, 'x'));
  s.ShrinkToFit();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], "hello");
  EXPECT_EQ(s[1], "");
  EXPECT_EQ(s[2], std::string_view("a\0b", 3));
  EXPECT_EQ(s[3], std::string(100, 'x'));
}

TEST(VocabularyTest, LooksUpBothWaysWithGapsAndRepeats) {
  Vocabulary v;
  ASSERT_TRUE(v.Add("a", 0).ok());
  ASSERT_TRUE(v.Add("bc", 3).ok());       // ids 1 and 2 are gaps
  ASSERT_TRUE(v.Add("a", 4).ok());        // a repeated string keeps its first id
  ASSERT_TRUE(v.Add("longer one", 2).ok());
  ASSERT_TRUE(v.Add("bc-last", 3).ok());  // a repeated id is named by its last entry
  v.Finish();
  EXPECT_EQ(v.size(), 5);
  EXPECT_THAT(v.Find("a"), Optional(0));
  EXPECT_THAT(v.Find("bc"), Optional(3));  // still found: both strings map to id 3
  EXPECT_THAT(v.Find("bc-last"), Optional(3));
  EXPECT_THAT(v.Find("longer one"), Optional(2));
  EXPECT_EQ(v.Find("b"), std::nullopt);
  EXPECT_EQ(v.Find(""), std::nullopt);
  EXPECT_FALSE(v.Contains("abc"));
  EXPECT_EQ(v.Token(0), "a");
  EXPECT_EQ(v.Token(1), "");
  EXPECT_EQ(v.Token(2), "longer one");
  EXPECT_EQ(v.Token(3), "bc-last");
  EXPECT_EQ(v.Token(4), "a");
  EXPECT_EQ(v.Token(-1), "");
  EXPECT_EQ(v.Token(5), "");
  EXPECT_EQ(v.max_token_bytes(), 10u);
}

// Many entries: the hash set grows and rehashes through its functors.
TEST(VocabularyTest, ThousandsOfEntriesSurviveRehashing) {
  Vocabulary v;
  for (int i = 0; i < 20000; ++i) ASSERT_TRUE(v.Add("tok" + std::to_string(i), 20000 - 1 - i).ok());
  v.Finish();
  EXPECT_EQ(v.size(), 20000);
  for (int i = 0; i < 20000; i += 7) {
    EXPECT_THAT(v.Find("tok" + std::to_string(i)), Optional(20000 - 1 - i));
    EXPECT_EQ(v.Token(20000 - 1 - i), "tok" + std::to_string(i));
  }
}

TEST(VocabularyTest, RefusesIdsOutsideTheRange) {
  Vocabulary v;
  const absl::Status negative = v.Add("x", -1);
  EXPECT_EQ(negative.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.message(), HasSubstr("'x' has id -1"));
  const absl::Status huge = v.Add("y", Vocabulary::kMaxId + 1);
  EXPECT_THAT(huge.message(), HasSubstr("'y' has id 16777216, outside 0..16777215"));
  EXPECT_TRUE(v.Add("z", Vocabulary::kMaxId).ok());
  EXPECT_EQ(v.size(), Vocabulary::kMaxId + 1);
}

// A hostile tokenizer.json with a huge vocab or added-token id is a load error naming
// it, not an 8 GB allocation.
TEST(VocabularyTest, HostileIdsInTokenizerJsonAreLoadErrors) {
  auto vocab_id = Tokenizer::FromJson(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 2000000000}, "merges": []}})");
  ASSERT_FALSE(vocab_id.ok());
  EXPECT_THAT(vocab_id.status().message(), HasSubstr("'b' has id 2000000000"));
  auto added_id = Tokenizer::FromJson(
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
          "added_tokens": [{"id": 4294967297, "content": "<x>", "special": true}]})");
  ASSERT_FALSE(added_id.ok());
  EXPECT_THAT(added_id.status().message(), HasSubstr("added token '<x>' has id 4294967297"));
}

}  // namespace
}  // namespace infera::text
