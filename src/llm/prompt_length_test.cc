#include "llm/prompt_length.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/test_tokenizers.h"

namespace infera::llm {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::unique_ptr<Tokenizer> SentencePiece() {
  // Longest entry "▁hello": 8 bytes a token at most; "<s>" added by the template.
  auto t = Tokenizer::FromJson(testing::SentencePieceTokenizerJson());
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

TEST(PromptLengthTest, TheBudgetLeavesMaxTokensOrOneToken) {
  EXPECT_EQ((PromptLimit{512, 16, true}).budget(), 496);
  EXPECT_EQ((PromptLimit{512, 16, false}).budget(), 511);  // chat without max_tokens
  // max_tokens at or past the context: the engine's exact message decides, one token left.
  EXPECT_EQ((PromptLimit{512, 512, true}).budget(), 511);
  EXPECT_EQ((PromptLimit{512, int64_t{1} << 24, true}).budget(), 511);
  EXPECT_EQ((PromptLimit{1, 1, true}).budget(), 0);
}

TEST(PromptLengthTest, LeastIdsComeFromTheSizeAndTheSpecialTokens) {
  auto t = SentencePiece();
  EXPECT_EQ(LeastTextIds(*t, 0, false), 0);
  EXPECT_EQ(LeastTextIds(*t, 8, false), 1);
  EXPECT_EQ(LeastTextIds(*t, 9, false), 2);
  EXPECT_EQ(LeastTextIds(*t, 9, true), 3);  // + <s>
  EXPECT_EQ(LeastTextIds(*t, size_t{60} << 20, false), (int64_t{60} << 20) / 8);
  // Never more than the text really has.
  for (std::string text : {"hello world", "  hello  ", "h\u00e9\U0001F600 world"}) {
    EXPECT_LE(LeastTextIds(*t, text.size(), true), static_cast<int64_t>(t->Encode(text, true).size())) << text;
  }
}

TEST(PromptLengthTest, TheRefusalNamesMaxModelLenInVllmWords) {
  auto t = SentencePiece();
  const std::string no_room(PromptTooLong({512, 16, false}, 600, /*exact=*/true).message());
  EXPECT_THAT(no_room, AllOf(HasSubstr("maximum context length is 512 tokens (max_model_len)"),
                             HasSubstr("the prompt has 600 tokens, which leaves no room for a completion")));
  const std::string with_completion(PromptTooLong({512, 16, true}, 7864320, false, size_t{60} << 20, t.get()).message());
  EXPECT_THAT(with_completion,
              AllOf(HasSubstr("maximum context length is 512 tokens (max_model_len)"),
                    HasSubstr("you requested at least 7864336 tokens (at least 7864320 in the prompt, 16 in the "
                              "completion)"),
                    HasSubstr("The prompt is at least 62914560 bytes; this model's tokenizer puts at most 8 bytes in one token")));
  EXPECT_EQ(PromptTooLong({512, 16, true}, 600, true).code(), absl::StatusCode::kInvalidArgument);
}

TEST(PromptLengthTest, TokenizePromptGivesTheIdsOrTheRefusal) {
  auto t = SentencePiece();
  // "<s> ▁hello ▁wor l d": 5 ids.
  auto ids = TokenizePrompt(*t, "hello world", true, {21, 16, true});
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, t->Encode("hello world", true));
  auto over = TokenizePrompt(*t, "hello world", true, {20, 16, true});  // a budget of 4
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(std::string(over.status().message()), HasSubstr("at least 5 in the prompt, 16 in the completion"));
  // 60 MB: refused from its size (no tokenising: instant even under ASan).
  auto huge = TokenizePrompt(*t, std::string(size_t{60} << 20, 'x'), true, {512, 16, true});
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(std::string(huge.status().message()), HasSubstr("max_model_len"));
}

}  // namespace
}  // namespace infera::llm
