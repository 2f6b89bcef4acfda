// A GGUF's chat template takes the same path as a tokenizer_config.json's: the GGUF
// tokenizer (src/gguf/gguf_tokenizer.h) carries tokenizer.chat_template and the named
// tokenizer.chat_template.<name> ones into its tokenizer_config, and the backend hands
// Tokenizer::chat_template() / chat_template_tool_use() to ChatTemplate::Detect either
// way. Each test renders the same conversations through both and expects equal prompts.
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_tokenizer.h"
#include "gguf/test_gguf_builder.h"
#include "gtest/gtest.h"
#include "llm/chat_template.h"
#include "llm/test_chat_template_fixture.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "text/tokenizer.h"

namespace infera::llm {
namespace {

using testing::ChatTemplateFixture;

// A small byte-level BPE vocabulary with ChatML's markers as control tokens.
gguf::testing::GgufBuilder Vocabulary() {
  gguf::testing::GgufBuilder b;
  b.Str("tokenizer.ggml.model", "gpt2")
      .StrArray("tokenizer.ggml.tokens", {"a", "b", "ab", "<|endoftext|>", "<|im_start|>", "<|im_end|>"})
      .I32Array("tokenizer.ggml.token_type", {1, 1, 1, 3, 3, 3})
      .StrArray("tokenizer.ggml.merges", {"a b"})
      .U32("tokenizer.ggml.bos_token_id", 3)
      .U32("tokenizer.ggml.eos_token_id", 5);
  return b;
}

absl::StatusOr<std::unique_ptr<text::Tokenizer>> FromGguf(const std::string& bytes) {
  auto file = gguf::GgufFile::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t.gguf");
  if (!file.ok()) return file.status();
  return gguf::LoadGgufTokenizer((*file)->metadata(), "t.gguf");
}

// The same vocabulary's tokenizer_config.json with `chat_template` as Hugging Face writes
// it: a string, or the list of {"name", "template"} when `tool_use` is given.
absl::StatusOr<std::unique_ptr<text::Tokenizer>> FromTokenizerConfig(const std::string& gguf_bytes,
                                                                     const std::string& default_template,
                                                                     const std::string& tool_use) {
  auto file = gguf::GgufFile::FromBytes(reinterpret_cast<const uint8_t*>(gguf_bytes.data()), gguf_bytes.size(),
                                        "t.gguf");
  if (!file.ok()) return file.status();
  auto docs = gguf::ConvertGgufTokenizer((*file)->metadata(), "t.gguf");
  if (!docs.ok()) return docs.status();
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("bos_token");
  w.String("<|endoftext|>");
  w.Key("eos_token");
  w.String("<|im_end|>");
  w.Key("chat_template");
  if (tool_use.empty()) {
    w.String(default_template.c_str());
  } else {
    w.StartArray();
    for (const auto& [name, text] : {std::pair{"default", &default_template}, std::pair{"tool_use", &tool_use}}) {
      w.StartObject();
      w.Key("name");
      w.String(name);
      w.Key("template");
      w.String(text->c_str());
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return text::Tokenizer::FromJson(docs->tokenizer_json, buffer.GetString(), docs->generation_config_json);
}

absl::StatusOr<ChatTemplate> Detect(const text::Tokenizer& t) {
  return ChatTemplate::Detect(t.chat_template(), t.bos_token(), t.eos_token(), t.chat_template_tool_use());
}

ChatMessage Message(std::string role, std::string content) {
  ChatMessage m;
  m.role = std::move(role);
  m.content = std::move(content);
  return m;
}

const std::vector<ChatMessage> kChat = {Message("system", "Be brief."), Message("user", "Grüße"),
                                        Message("assistant", "Hallo!"), Message("user", "Bye")};
const std::vector<ChatTool> kTools = {
    {"get_weather", "Weather now", R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})"}};

std::vector<ChatMessage> ToolRoundTrip() {
  std::vector<ChatMessage> m = {Message("user", "Weather in Paris?"), Message("assistant", ""), Message("tool", "sunny")};
  m[1].tool_calls = {{"abc123xyz", "get_weather", R"({"city":"Paris"})"}};
  m[2].tool_call_id = "abc123xyz";
  return m;
}

TEST(ChatTemplateGgufTest, OneTemplateRendersAsFromTokenizerConfig) {
  const std::string qwen = ChatTemplateFixture("qwen2_5.jinja");
  const std::string bytes = Vocabulary().Str("tokenizer.chat_template", qwen).Build();
  auto gguf = FromGguf(bytes);
  ASSERT_TRUE(gguf.ok()) << gguf.status();
  auto config = FromTokenizerConfig(bytes, qwen, "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ((*gguf)->chat_template(), qwen);
  EXPECT_EQ((*gguf)->bos_token(), (*config)->bos_token());
  EXPECT_EQ((*gguf)->eos_token(), (*config)->eos_token());
  auto a = Detect(**gguf);
  auto b = Detect(**config);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->name(), b->name());
  for (bool generation_prompt : {true, false}) {
    auto x = a->Render(kChat, generation_prompt);
    auto y = b->Render(kChat, generation_prompt);
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(*x, *y);
    EXPECT_NE(x->find("<|im_start|>user\nGrüße<|im_end|>"), std::string::npos) << *x;
  }
  auto x = a->Render(ToolRoundTrip(), true, kTools);
  auto y = b->Render(ToolRoundTrip(), true, kTools);
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*x, *y);
}

TEST(ChatTemplateGgufTest, NamedToolUseTemplateIsPickedAsFromTokenizerConfig) {
  // The default (Qwen2.5) and a named tool_use (Hermes-style, recursive macro over the
  // schema) template, as llama.cpp's convert stores tokenizer_config's list form.
  const std::string qwen = ChatTemplateFixture("qwen2_5.jinja");
  const std::string hermes = ChatTemplateFixture("hermes_style.jinja");
  const std::string bytes = Vocabulary()
                                .Str("tokenizer.chat_template", qwen)
                                .Str("tokenizer.chat_template.tool_use", hermes)
                                .StrArray("tokenizer.chat_templates", {"tool_use"})
                                .Build();
  auto gguf = FromGguf(bytes);
  ASSERT_TRUE(gguf.ok()) << gguf.status();
  EXPECT_EQ((*gguf)->chat_template(), qwen);
  EXPECT_EQ((*gguf)->chat_template_tool_use(), hermes);
  auto config = FromTokenizerConfig(bytes, qwen, hermes);
  ASSERT_TRUE(config.ok()) << config.status();
  auto a = Detect(**gguf);
  auto b = Detect(**config);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  // Without tools the default renders; with tools the tool_use template (its prompt is
  // what ChatTemplate gives for hermes_style.jinja alone).
  auto plain_gguf = a->Render(kChat, true);
  auto plain_config = b->Render(kChat, true);
  ASSERT_TRUE(plain_gguf.ok()) << plain_gguf.status();
  ASSERT_TRUE(plain_config.ok()) << plain_config.status();
  EXPECT_EQ(*plain_gguf, *plain_config);
  auto tools_gguf = a->Render(ToolRoundTrip(), true, kTools);
  auto tools_config = b->Render(ToolRoundTrip(), true, kTools);
  ASSERT_TRUE(tools_gguf.ok()) << tools_gguf.status();
  ASSERT_TRUE(tools_config.ok()) << tools_config.status();
  EXPECT_EQ(*tools_gguf, *tools_config);
  auto hermes_only = ChatTemplate::Detect(hermes, (*gguf)->bos_token(), (*gguf)->eos_token());
  ASSERT_TRUE(hermes_only.ok()) << hermes_only.status();
  auto expected = hermes_only->Render(ToolRoundTrip(), true, kTools);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(*tools_gguf, *expected);
  EXPECT_NE(*tools_gguf, *a->Render(ToolRoundTrip(), true, {})) << "tools must change the prompt";
}

TEST(ChatTemplateGgufTest, BadNamedTemplateIsALoadErrorNamingTheKey) {
  auto not_a_string = FromGguf(Vocabulary().Str("tokenizer.chat_template", "{{ 1 }}").U32("tokenizer.chat_template.rag", 7).Build());
  ASSERT_FALSE(not_a_string.ok());
  EXPECT_NE(std::string(not_a_string.status().message()).find("tokenizer.chat_template.rag"), std::string::npos)
      << not_a_string.status();
  auto bad_utf8 = FromGguf(Vocabulary().Str("tokenizer.chat_template.tool_use", "{{ '\xC3' }}").Build());
  ASSERT_FALSE(bad_utf8.ok());
  EXPECT_NE(std::string(bad_utf8.status().message()).find("tokenizer.chat_template.tool_use is not valid UTF-8"),
            std::string::npos)
      << bad_utf8.status();
}

}  // namespace
}  // namespace infera::llm
