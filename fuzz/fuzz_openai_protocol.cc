// Fuzz target: the OpenAI request parsers (llm/openai_protocol.h), /v1/completions and
// /v1/chat/completions bodies with every sampling field.
//
// Input: byte 0 selects the parser (even: completions, odd: chat), the rest is the body.
// An accepted request is then written back out through the response builders with its
// own strings (model name, prompt text, message contents), which must produce JSON
// without crashing whatever bytes those strings hold.
#include <cstdint>
#include <string>
#include <string_view>

#include "llm/openai_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  infera::llm::ChoiceDelta choice;
  infera::llm::Usage usage;
  if ((data[0] & 1) == 0) {
    auto request = infera::llm::ParseCompletionRequest(body);
    if (!request.ok()) {
      (void)infera::llm::OpenAiErrorJson(400, std::string(request.status().message()));
      return 0;
    }
    choice.text = request->prompt_text.value_or("");
    (void)infera::llm::CompletionJson("cmpl-fuzz", 0, request->model, choice, usage);
    (void)infera::llm::CompletionChunkJson("cmpl-fuzz", 0, request->model, choice);
    return 0;
  }
  auto request = infera::llm::ParseChatRequest(body);
  if (!request.ok()) {
    (void)infera::llm::OpenAiErrorJson(400, std::string(request.status().message()));
    return 0;
  }
  for (const infera::llm::ChatMessage& message : request->messages) choice.text += message.content;
  (void)infera::llm::ChatJson("chatcmpl-fuzz", 0, request->model, choice, usage);
  (void)infera::llm::ChatChunkJson("chatcmpl-fuzz", 0, request->model, choice, /*first=*/true);
  (void)infera::llm::UsageChunkJson("chatcmpl-fuzz", 0, request->model, "chat.completion.chunk", usage);
  return 0;
}
