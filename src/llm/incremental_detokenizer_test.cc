#include "llm/incremental_detokenizer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/llama_config.h"
#include "llm/test_tokenizers.h"

namespace infera::llm {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Tokenizer> ByteLevel() {
  auto t = Tokenizer::FromJson(testing::ByteLevelTokenizerJson(testing::kGpt2PreTokenizer),
                               R"({"eos_token": "<|endoftext|>"})", R"({"eos_token_id": [260, 261]})");
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

TEST(IncrementalDetokenizerTest, HoldsBackPartialCharactersAndSkipsSpecialTokens) {
  auto t = ByteLevel();
  IncrementalDetokenizer d(*t, /*skip_special_tokens=*/true);
  EXPECT_EQ(d.Push('a'), "a");
  EXPECT_EQ(d.Push(0xF0), "");
  EXPECT_EQ(d.Push(0x9F), "");
  EXPECT_EQ(d.Push(0x98), "");
  EXPECT_EQ(d.Push(0x80), "\U0001F600");
  EXPECT_EQ(d.Push(260), "");
  EXPECT_EQ(d.Push(0xC3), "");
  EXPECT_EQ(d.Push('x'), "\uFFFDx");  // C3 followed by ASCII can never complete
  EXPECT_EQ(d.Push(0xE6), "");
  EXPECT_EQ(d.Flush(), "\uFFFD");
}
// Issue 13 finding 1: config.json goes through the limited JSON reader too (the
// tokenizer files' half of this check is in text/tokenizer_test.cc).
TEST(LlamaConfigTest, DeeplyNestedConfigIsALoadErrorNamingTheLimit) {
  const std::string deep = R"({"model": )" + std::string(250000, '[') + std::string(250000, ']') + "}";
  auto config = LlamaConfig::Parse(deep);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("config.json"));
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("100 levels"));
}

}  // namespace
}  // namespace infera::llm
