#include "llm/chat_template.h"

#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
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
  EXPECT_FALSE(t->Render({{"robot", "x"}}, true).ok());
}

// A tool round trip: the user asks, the assistant called a tool, the tool answered.
std::vector<ChatMessage> ToolRoundTrip() {
  std::vector<ChatMessage> m = {{"user", "Weather in Paris?"}, {"assistant", ""}, {"tool", "sunny"}};
  m[1].tool_calls = {{"call_1", "get_weather", R"({"city":"Paris"})"}};
  m[2].tool_call_id = "call_1";
  return m;
}
const std::vector<ChatTool> kTools = {{"get_weather", "Weather now", R"({"type":"object"})"}};

TEST(ChatTemplateTest, ChatMlRendersToolsHermesStyle) {
  auto t = ChatTemplate::Detect("<|im_start|>", "", "<|im_end|>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->tool_call_format(), ToolCallFormat::kHermes);
  std::vector<ChatMessage> m = ToolRoundTrip();
  m.push_back({"tool", "windy"});  // consecutive results share one user turn
  EXPECT_EQ(*t->Render(m, true, kTools),
            "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now", )"
            R"("parameters": {"type":"object"}}})"
            "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
            "<args-json-object>}\n</tool_call><|im_end|>\n"
            "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
            "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n"
            "</tool_call><|im_end|>\n"
            "<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\nwindy\n</tool_response>"
            "<|im_end|>\n<|im_start|>assistant\n");
  // A system message leads the tools block.
  auto with_system = t->Render({{"system", "Be brief."}, {"user", "Hi"}}, false, kTools);
  ASSERT_TRUE(with_system.ok());
  EXPECT_TRUE(with_system->starts_with("<|im_start|>system\nBe brief.\n\n# Tools\n")) << *with_system;
}

TEST(ChatTemplateTest, Llama3RendersToolsAsJson) {
  auto t = ChatTemplate::Detect("<|start_header_id|>", "<|begin_of_text|>", "<|eot_id|>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->tool_call_format(), ToolCallFormat::kLlama3);
  auto r = t->Render(ToolRoundTrip(), true, kTools);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r,
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please "
            "respond with a JSON for a function call with its proper arguments that best answers the given prompt."
            "\n\nRespond in the format {\"name\": function name, \"parameters\": dictionary of argument name and "
            "its value}.Do not use variables.\n\n"
            R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now", )"
            R"("parameters": {"type":"object"}}})"
            "\n\nWeather in Paris?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"get_weather\", \"parameters\": "
            "{\"city\":\"Paris\"}}<|eot_id|>"
            "<|start_header_id|>ipython<|end_header_id|>\n\nsunny<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateTest, MistralRendersAvailableToolsCallsAndResults) {
  auto t = ChatTemplate::Detect("[INST]", "<s>", "</s>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->tool_call_format(), ToolCallFormat::kMistral);
  auto r = t->Render(ToolRoundTrip(), true, kTools);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r,
            "<s>[AVAILABLE_TOOLS] ["
            R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now", )"
            R"("parameters": {"type":"object"}}})"
            "][/AVAILABLE_TOOLS][INST] Weather in Paris? [/INST]"
            R"([TOOL_CALLS] [{"name": "get_weather", "arguments": {"city":"Paris"}, "id": "call_1"}]</s>)"
            R"([TOOL_RESULTS] {"content": "sunny", "call_id": "call_1"}[/TOOL_RESULTS])");
}

TEST(ChatTemplateTest, Llama2RefusesTools) {
  auto t = ChatTemplate::Detect("[INST] <<SYS>>", "<s>", "</s>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->tool_call_format(), ToolCallFormat::kNone);
  EXPECT_EQ(t->Render({{"user", "Hi"}}, true, kTools).status().code(), absl::StatusCode::kInvalidArgument);
  auto r = t->Render(ToolRoundTrip(), true);
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("no tool-call format"));
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
    if (t->tool_call_format() == ToolCallFormat::kNone) continue;
    std::vector<ChatMessage> tools = ToolRoundTrip();
    tools[2].content = " \n results \t ";
    for (bool generation_prompt : {false, true}) {
      auto rendered = t->Render(tools, generation_prompt, kTools);
      ASSERT_TRUE(rendered.ok()) << t->name();
      EXPECT_GE(rendered->size(), ChatTemplate::MinRenderedBytes(tools)) << t->name();
    }
  }
}

}  // namespace
}  // namespace infera::llm
