#include "llm/chat_template.h"

#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/test_chat_template_fixture.h"

namespace infera::llm {
namespace {

using testing::ChatTemplateFixture;

using ::testing::HasSubstr;

const std::vector<ChatMessage> kChat = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};

// A tool round trip: the user asks, the assistant called a tool, the tool answered twice.
std::vector<ChatMessage> ToolRoundTrip() {
  std::vector<ChatMessage> m = {{"user", "Weather in Paris?"}, {"assistant", ""}, {"tool", "sunny"}, {"tool", "windy"}};
  m[1].tool_calls = {{"abc123xyz", "get_weather", R"({"city":"Paris"})"}};
  m[2].tool_call_id = m[3].tool_call_id = "abc123xyz";
  return m;
}
const std::vector<ChatTool> kTools = {{"get_weather", "Weather now", R"({"type":"object"})"}};

TEST(ChatTemplateTest, ChatMlAsFortuneShipsIt) {
  auto t = ChatTemplate::Detect(ChatTemplateFixture("chatml.jinja"), "", "<|im_end|>");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->name(), "chatml");
  EXPECT_EQ(*t->Render({{"system", "Be brief."}, {"user", "Hi"}}, true),
            "<|im_start|>system\n"
            "Be brief.<|im_end|>\n"
            "<|im_start|>user\n"
            "Hi<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(*t->Render({{"user", "Hi"}}, false), "<|im_start|>user\nHi<|im_end|>\n");
  // It never mentions `tools`: tools are refused rather than silently dropped.
  auto r = t->Render({{"user", "Hi"}}, true, kTools);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("does not render tools"));
}

// Expected strings: Python's jinja2 in Hugging Face's environment (jinja_reference_test.py
// checks the same templates on more conversations).
TEST(ChatTemplateTest, Qwen25RendersToolsCallsAndResults) {
  auto t = ChatTemplate::Detect(ChatTemplateFixture("qwen2_5.jinja"), "", "<|im_end|>");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->tool_call_format(), ToolCallFormat::kHermes);
  auto r = t->Render(ToolRoundTrip(), true, kTools);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "<|im_start|>system\n"
            "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n"
            "\n"
            "# Tools\n"
            "\n"
            "You may call one or more functions to assist with the user query.\n"
            "\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n"
            "<tools>\n"
            "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weather now\", \"parameters\": {\"type\": \"object\"}}}\n"
            "</tools>\n"
            "\n"
            "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
            "<tool_call>\n"
            "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
            "</tool_call><|im_end|>\n"
            "<|im_start|>user\n"
            "Weather in Paris?<|im_end|>\n"
            "<|im_start|>assistant\n"
            "<tool_call>\n"
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
            "</tool_call><|im_end|>\n"
            "<|im_start|>user\n"
            "<tool_response>\n"
            "sunny\n"
            "</tool_response>\n"
            "<tool_response>\n"
            "windy\n"
            "</tool_response><|im_end|>\n"
            "<|im_start|>assistant\n");
  // Without a system message the template's default one leads.
  EXPECT_EQ(*t->Render({{"user", "Hi"}}, true),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, Llama3StyleRendersToolsAsJson) {
  auto t = ChatTemplate::Detect(ChatTemplateFixture("llama3_1_style.jinja"), "<|begin_of_text|>", "<|eot_id|>");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->tool_call_format(), ToolCallFormat::kLlama3);
  std::vector<ChatMessage> m = ToolRoundTrip();
  m.pop_back();
  auto r = t->Render(m, true, kTools);
  ASSERT_TRUE(r.ok()) << r.status();
  // The date line comes from strftime_now (the clock); the rest is fixed.
  EXPECT_THAT(*r, HasSubstr("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n"
                            "Today Date: "));
  EXPECT_THAT(*r, HasSubstr("\"name\": \"get_weather\",\n        \"description\": \"Weather now\""));
  EXPECT_THAT(*r, HasSubstr("Weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
                            "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|eot_id|>"
                            "<|start_header_id|>ipython<|end_header_id|>\n\nsunny<|eot_id|>"
                            "<|start_header_id|>assistant<|end_header_id|>\n\n"));
}

TEST(ChatTemplateTest, MistralV03RendersAvailableToolsCallsAndResults) {
  auto t = ChatTemplate::Detect(ChatTemplateFixture("mistral_v0_3.jinja"), "<s>", "</s>");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->tool_call_format(), ToolCallFormat::kMistral);
  std::vector<ChatMessage> m = ToolRoundTrip();
  m.pop_back();
  auto r = t->Render(m, true, kTools);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "<s>[AVAILABLE_TOOLS] [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weather now\", \"parameters\": {\"type\": \"object\"}}}][/AVAILABLE_TOOLS][INST] Weather in Paris?[/INST][TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abc123xyz\"}]</s>[TOOL_RESULTS] {\"content\": sunny, \"call_id\": \"abc123xyz\"}[/TOOL_RESULTS]");
  // The template's own check: its raise_exception message is the error.
  m[1].tool_calls[0].id = "call_1";
  r = t->Render(m, true, kTools);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Tool call IDs should be alphanumeric strings with length 9!"));
}

TEST(ChatTemplateTest, FamiliesWithoutAToolFormatRefuseTools) {
  for (const char* name : {"phi3_5.jinja", "gemma_style.jinja"}) {
    auto t = ChatTemplate::Detect(ChatTemplateFixture(name), "<s>", "</s>");
    ASSERT_TRUE(t.ok()) << name << t.status();
    EXPECT_EQ(t->tool_call_format(), ToolCallFormat::kNone) << name;
    EXPECT_TRUE(t->Render({{"user", "Hi"}}, true).ok()) << name;
    auto r = t->Render(ToolRoundTrip(), true);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("no tool-call format")) << name;
  }
  auto llama2 = ChatTemplate::Detect("[INST] <<SYS>>{{ messages[0].content }}", "<s>", "</s>");
  ASSERT_TRUE(llama2.ok());
  EXPECT_EQ(llama2->name(), "llama-2");
  EXPECT_EQ(llama2->Render({{"user", "Hi"}}, true, kTools).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ChatTemplateTest, MissingUnparseableAndFailingTemplatesAreClearErrors) {
  EXPECT_EQ(ChatTemplate::Detect("", "", "").status().code(), absl::StatusCode::kFailedPrecondition);
  auto bad = ChatTemplate::Detect("<|im_start|>\n{% for m in messages %}{% include 'x' %}{% endfor %}", "", "");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("line 2: unsupported template construct '{% include %}'"));
  auto filter = ChatTemplate::Detect("{{ messages | frobnicate }}", "", "");
  EXPECT_THAT(std::string(filter.status().message()), HasSubstr("unsupported filter 'frobnicate'"));
  auto t = ChatTemplate::Detect(ChatTemplateFixture("mixtral.jinja"), "<s>", "</s>");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->Render({{"robot", "x"}}, true).ok());
  EXPECT_FALSE(t->Render({}, true).ok());
  auto r = t->Render({{"assistant", "first"}}, true);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("Conversation roles must alternate user/assistant/user/assistant/..."));
  EXPECT_EQ(*t->Render({{"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}}, true),
            "<s>[INST] Hi [/INST]Hello!</s>[INST] Bye [/INST]");
}

TEST(ChatTemplateTest, NamedToolUseTemplateRendersRequestsWithTools) {
  auto t = ChatTemplate::Detect("<|im_start|>plain {{ messages[0].content }}", "", "",
                                "<|im_start|>tools {{ tools | map(attribute='function.name') | join(',') }}");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t->Render({{"user", "Hi"}}, true), "<|im_start|>plain Hi");
  EXPECT_EQ(*t->Render({{"user", "Hi"}}, true, kTools), "<|im_start|>tools get_weather");
}

TEST(ChatTemplateTest, MinRenderedBytesHoldsForTheFamilyFixtures) {
  const std::vector<ChatMessage> spaced = {{"system", "  Be brief.  "}, {"user", " \t Hi \n"},
                                           {"assistant", "   "}, {"user", "\n Bye  there \r\n"}};
  // The non-system contents, trimmed: "Hi" + "" + "Bye  there".
  EXPECT_EQ(ChatTemplate::MinRenderedBytes(spaced), 2u + 0u + 10u);
  EXPECT_EQ(ChatTemplate::MinRenderedBytes({{"system", "only a system message"}}), 0u);
  for (const char* name : {"chatml.jinja", "qwen2_5.jinja", "qwen3.jinja", "llama3_1_style.jinja", "mistral_v0_3.jinja",
                           "phi3_5.jinja", "deepseek_style.jinja"}) {
    auto t = ChatTemplate::Detect(ChatTemplateFixture(name), "<s>", "</s>");
    ASSERT_TRUE(t.ok()) << name;
    for (const auto& messages : {kChat, spaced, std::vector<ChatMessage>{{"user", std::string(1000, ' ')}}}) {
      for (bool generation_prompt : {false, true}) {
        auto rendered = t->Render(messages, generation_prompt);
        if (!rendered.ok()) continue;  // a template's own refusal (e.g. alternation)
        EXPECT_GE(rendered->size(), ChatTemplate::MinRenderedBytes(messages)) << name;
      }
    }
  }
}

}  // namespace
}  // namespace infera::llm
