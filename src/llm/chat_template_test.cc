#include "llm/chat_template.h"

#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace infera::llm {
namespace {

const std::vector<ChatMessage> kChat = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};

TEST(ChatTemplateTest, Llama3) {
  auto t = ChatTemplate::Detect("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}",
                                "<|begin_of_text|>", "<|eot_id|>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->Render({{"user", " Hi "}}, true),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateTest, ChatMlWithQwenDefaultSystem) {
  auto t = ChatTemplate::Detect(
      "{% if messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}"
      "{% endif %}{{'<|im_start|>' + message['role'] + '\\n'}}",
      "", "<|im_end|>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->Render({{"user", "Hi"}}, true),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(*t->Render({{"system", "S"}, {"user", "Hi"}}, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatTemplateTest, Llama2) {
  auto t = ChatTemplate::Detect("[INST] <<SYS>> ... <</SYS>>", "<s>", "</s>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->name(), "llama-2");
  EXPECT_EQ(*t->Render(kChat, true),
            "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] Bye [/INST]");
}

TEST(ChatTemplateTest, Mistral) {
  auto t = ChatTemplate::Detect("{{ '[INST] ' + message['content'] + ' [/INST]' }}", "<s>", "</s>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->Render(kChat, true), "<s>[INST] Be brief.\n\nHi [/INST]Hello!</s>[INST] Bye [/INST]");
}

TEST(ChatTemplateTest, UnknownOrMissingTemplatesAreClearErrors) {
  EXPECT_EQ(ChatTemplate::Detect("", "", "").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ChatTemplate::Detect("{{ messages }}", "", "").status().code(), absl::StatusCode::kInvalidArgument);
  auto t = ChatTemplate::Detect("<|im_start|>", "", "");
  EXPECT_FALSE(t->Render({{"tool", "x"}}, true).ok());
}

TEST(ChatTemplateTest, MinRenderedBytesNeverExceedsTheRenderedPrompt) {
  const std::vector<ChatMessage> spaced = {{"system", "  Be brief.  "}, {"user", " \t Hi \n"},
                                           {"assistant", "   "}, {"user", "\n Bye  there \r\n"}};
  // The non-system contents, trimmed: "Hi" + "" + "Bye  there".
  EXPECT_EQ(ChatTemplate::MinRenderedBytes(spaced), 2u + 0u + 10u);
  EXPECT_EQ(ChatTemplate::MinRenderedBytes({{"system", "only a system message"}}), 0u);
  for (const auto& [jinja, bos, eos] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"<|start_header_id|>", "<|begin_of_text|>", "<|eot_id|>"},
           {"<|im_start|>", "", "<|im_end|>"},
           {"[INST] <<SYS>>", "<s>", "</s>"},
           {"[INST]", "<s>", "</s>"}}) {
    auto t = ChatTemplate::Detect(jinja, bos, eos);
    ASSERT_TRUE(t.ok());
    for (const auto& messages : {kChat, spaced, std::vector<ChatMessage>{{"user", std::string(1000, ' ')}}}) {
      for (bool generation_prompt : {false, true}) {
        auto rendered = t->Render(messages, generation_prompt);
        ASSERT_TRUE(rendered.ok()) << t->name();
        EXPECT_GE(rendered->size(), ChatTemplate::MinRenderedBytes(messages)) << t->name();
      }
    }
  }
}

}  // namespace
}  // namespace infera::llm
