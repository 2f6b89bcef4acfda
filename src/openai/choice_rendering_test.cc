// RenderOutput: a generation's output as an OpenAI choice delta.
#include "openai/choice_rendering.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "openai/fake_text_generator.h"

namespace infera::openai {
namespace {

using ::testing::ElementsAre;
using testing::FakeTextGenerator;

GenerationOutput Output(std::string text, std::vector<int32_t> ids, std::vector<float> logprobs,
                        std::vector<std::vector<TokenLogprob>> top = {}) {
  GenerationOutput o;
  o.text = std::move(text);
  o.token_ids = std::move(ids);
  o.logprobs = std::move(logprobs);
  o.top_logprobs = std::move(top);
  return o;
}

std::vector<std::string> TopTexts(const std::vector<TopToken>& top) {
  std::vector<std::string> texts;
  for (const TopToken& t : top) texts.push_back(t.token);
  return texts;
}

TEST(CodePointsTest, CountsWhatPythonsLenCounts) {
  EXPECT_EQ(CodePoints(""), 0);
  EXPECT_EQ(CodePoints("ab"), 2);
  EXPECT_EQ(CodePoints(" é"), 2);
  EXPECT_EQ(CodePoints("\xe2\x82\xac!"), 2);
}

TEST(RenderOutputTest, TextOnlyWithoutLogprobs) {
  FakeTextGenerator model;
  int64_t offset = 0;
  GenerationOutput o = Output("ab", {0, 1}, {-0.1f, -0.2f});
  ChoiceDelta d = RenderOutput(o, 3, Endpoint::kCompletions, /*logprobs=*/false, TokenRenderer(model, false), offset);
  EXPECT_EQ(d.index, 3);
  EXPECT_EQ(d.text, "ab");
  EXPECT_TRUE(d.tokens.empty() && d.logprobs.empty() && d.top.empty() && d.text_offsets.empty());
  EXPECT_FALSE(d.finish_reason.has_value());
  EXPECT_EQ(offset, 0);
}

// Offsets count code points of the display texts and run on across outputs; a lone
// UTF-8 lead byte is shown as U+FFFD (one code point) but keeps its raw byte.
TEST(RenderOutputTest, CompletionsListTheSampledTokenAndRunningOffsets) {
  FakeTextGenerator model;
  const TokenRenderer tokens(model, false);
  int64_t offset = 0;
  GenerationOutput first = Output("a é", {0, 3}, {-0.5f, -1.0f}, {{{1, -0.4f}, {0, -0.5f}}, {{4, -0.9f}}});
  ChoiceDelta d = RenderOutput(first, 0, Endpoint::kCompletions, true, tokens, offset);
  EXPECT_THAT(d.tokens, ElementsAre("a", " é"));
  EXPECT_THAT(d.text_offsets, ElementsAre(0, 1));
  EXPECT_THAT(d.logprobs, ElementsAre(-0.5f, -1.0f));
  ASSERT_EQ(d.top.size(), 2u);
  EXPECT_THAT(TopTexts(d.top[0]), ElementsAre("b", "a"));      // sampled token already listed
  EXPECT_THAT(TopTexts(d.top[1]), ElementsAre("!", " é"));     // sampled token added last
  EXPECT_EQ(offset, 3);
  GenerationOutput second = Output("\xc3", {5}, {-2.0f});
  d = RenderOutput(second, 0, Endpoint::kCompletions, true, tokens, offset);
  EXPECT_THAT(d.tokens, ElementsAre("\xef\xbf\xbd"));
  EXPECT_THAT(d.token_bytes, ElementsAre("\xc3"));
  EXPECT_THAT(d.text_offsets, ElementsAre(3));
  ASSERT_EQ(d.top.size(), 1u);  // logprobs: 0 still lists the sampled token
  EXPECT_THAT(TopTexts(d.top[0]), ElementsAre("\xef\xbf\xbd"));
  EXPECT_EQ(offset, 4);
}

TEST(RenderOutputTest, ChatListsOnlyTheRequestedAlternatives) {
  FakeTextGenerator model;
  int64_t offset = 0;
  GenerationOutput without_top = Output("cd", {2}, {-0.3f});
  ChoiceDelta d = RenderOutput(without_top, 1, Endpoint::kChat, true, TokenRenderer(model, false), offset);
  EXPECT_THAT(d.tokens, ElementsAre("cd"));
  EXPECT_TRUE(d.top.empty());
  GenerationOutput with_top = Output("a", {0}, {-0.1f}, {{{0, -0.1f}, {1, -3.0f}}});
  d = RenderOutput(with_top, 1, Endpoint::kChat, true, TokenRenderer(model, false), offset);
  ASSERT_EQ(d.top.size(), 1u);
  EXPECT_THAT(TopTexts(d.top[0]), ElementsAre("a", "b"));
  EXPECT_EQ(d.top[0][1].bytes, "b");
}

TEST(RenderOutputTest, TokensAsTokenIds) {
  FakeTextGenerator model;
  int64_t offset = 0;
  GenerationOutput o = Output("cd", {2}, {-0.3f}, {{{2, -0.3f}, {4, -2.0f}}});
  ChoiceDelta d = RenderOutput(o, 0, Endpoint::kCompletions, true, TokenRenderer(model, true), offset);
  EXPECT_THAT(d.tokens, ElementsAre("token_id:2"));
  EXPECT_THAT(d.token_bytes, ElementsAre("cd"));
  EXPECT_THAT(TopTexts(d.top[0]), ElementsAre("token_id:2", "token_id:4"));
  EXPECT_EQ(offset, 10);  // "token_id:2" is what the client sees
}

}  // namespace
}  // namespace infera::openai
