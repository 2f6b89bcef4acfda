// CompletionGenerations / ChatGenerations: one GenerationRequest per choice, prompt-major.
#include "openai/generation_requests.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::openai {
namespace {

using ::testing::ElementsAre;

TEST(GenerationRequestsTest, CompletionChoicesArePromptMajorWithChildSeeds) {
  auto parsed = ParseCompletionRequest(
      R"({"model": "m", "prompt": ["a", [5, 6]], "n": 2, "seed": 10, "echo": true, "priority": 3, "max_tokens": 4})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto arrival = std::chrono::steady_clock::now();
  const std::vector<GenerationRequest> g = CompletionGenerations(*parsed, arrival);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].prompt_text, "a");
  EXPECT_EQ(g[1].prompt_text, "a");
  EXPECT_FALSE(g[2].prompt_text.has_value());
  EXPECT_THAT(g[3].prompt_ids, ElementsAre(5, 6));
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(g[i].sampling.seed, 10u + i % 2) << i;  // seed + k within each prompt
    EXPECT_TRUE(g[i].echo);
    EXPECT_EQ(g[i].priority, 3);
    EXPECT_EQ(g[i].sampling.max_tokens, 4);
    EXPECT_TRUE(g[i].max_tokens_set);  // completions: max_tokens as given, 16 by default
    EXPECT_EQ(g[i].arrival_time, arrival);
    EXPECT_EQ(g[i].cancellation, nullptr);
  }
}

TEST(GenerationRequestsTest, UnseededChoicesStayUnseeded) {
  auto parsed = ParseCompletionRequest(R"({"model": "m", "prompt": "a", "n": 3})");
  ASSERT_TRUE(parsed.ok());
  for (const GenerationRequest& g : CompletionGenerations(*parsed, {})) EXPECT_FALSE(g.sampling.seed.has_value());
}

TEST(GenerationRequestsTest, ChatChoicesCarryTheMessagesAndTheContextDefault) {
  auto parsed = ParseChatRequest(
      R"({"model": "m", "messages": [{"role": "user", "content": "hi"}], "n": 2, "seed": 1,
          "add_generation_prompt": false})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const std::vector<GenerationRequest> g = ChatGenerations(*parsed, {});
  ASSERT_EQ(g.size(), 2u);
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_TRUE(g[i].messages.has_value());
    EXPECT_EQ((*g[i].messages)[0].content, "hi");
    EXPECT_FALSE(g[i].add_generation_prompt);
    EXPECT_FALSE(g[i].max_tokens_set);  // chat: what the context leaves
    EXPECT_EQ(g[i].sampling.seed, 1u + i);
  }
  auto limited = ParseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                      "max_completion_tokens": 5})");
  ASSERT_TRUE(limited.ok());
  EXPECT_TRUE(ChatGenerations(*limited, {})[0].max_tokens_set);
}

}  // namespace
}  // namespace infera::openai
