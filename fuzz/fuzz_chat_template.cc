// Fuzz target: the chat template (llm/chat_template.h): parsing and family detection of a
// tokenizer_config.json `chat_template` string, and rendering of a conversation.
//
// Input: parts split on the line "\n@@@@\n": the Jinja template, the BOS token, the EOS
// token, then alternating role and content strings (roles need not be valid). Both
// add_generation_prompt values are rendered, without tools and with one tool; an
// assistant message's content also becomes a tool call's arguments (rendered as they are)
// and a tool message's content its tool_call_id.
// The template is rendered by the Jinja engine (fuzz_jinja fuzzes it alone); a template
// may drop message text, so MinRenderedBytes is no invariant here (chat_template.h).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "llm/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr std::string_view kSeparator = "\n@@@@\n";
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  while (parts.size() < 64) {
    const size_t at = input.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + kSeparator.size());
  }
  parts.push_back(input);
  if (parts.size() < 3) parts.resize(3);
  auto chat = infera::llm::ChatTemplate::Detect(parts[0], std::string(parts[1]), std::string(parts[2]));
  if (!chat.ok()) return 0;
  std::vector<infera::ChatMessage> messages;
  for (size_t i = 3; i + 1 < parts.size(); i += 2) {
    messages.push_back({std::string(parts[i]), std::string(parts[i + 1])});
  }
  std::vector<infera::ChatMessage> with_calls = messages;
  for (infera::ChatMessage& m : with_calls) {
    if (m.role == "assistant") m.tool_calls.push_back({"call_1", "f", m.content.empty() ? "{}" : m.content});
    if (m.role == "tool") m.tool_call_id = m.content;
  }
  const std::vector<infera::ChatTool> tools = {{"f", "a function", R"({"type":"object"})"}};
  for (const auto* conversation : {&messages, &with_calls}) {
    for (bool generation_prompt : {true, false}) {
      for (const auto& t : {std::vector<infera::ChatTool>{}, tools}) {
        auto rendered = chat->Render(*conversation, generation_prompt, t);
        if (!rendered.ok() && rendered.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
      }
    }
  }
  return 0;
}
