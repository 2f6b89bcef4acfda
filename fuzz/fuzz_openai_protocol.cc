// Fuzz target: the OpenAI request parsers (llm/openai_protocol.h), /v1/completions and
// /v1/chat/completions bodies with every sampling field.
//
// Input: byte 0 selects the parser (0 mod 3: completions, 1: chat, 2: embeddings), the
// rest is the body.
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
  if (data[0] % 3 == 0) {
    auto request = infera::llm::ParseCompletionRequest(body);
    if (!request.ok()) {
      (void)infera::llm::OpenAiErrorJson(400, std::string(request.status().message()));
      return 0;
    }
    for (const infera::llm::Prompt& prompt : request->prompts) choice.text += prompt.text.value_or("");
    choice.tokens.push_back(choice.text);
    choice.token_bytes.push_back(choice.text);
    choice.logprobs.push_back(-1.0f);
    choice.top.push_back({{choice.text, choice.text, -1.0f}});
    choice.text_offsets.push_back(0);
    (void)infera::llm::CompletionJson("cmpl-fuzz", 0, request->model, {choice, choice}, usage);
    (void)infera::llm::CompletionChunkJson("cmpl-fuzz", 0, request->model, choice);
    return 0;
  }
  auto request = infera::llm::ParseChatRequest(body);
  if (!request.ok()) {
    (void)infera::llm::OpenAiErrorJson(400, std::string(request.status().message()));
    return 0;
  }
  for (const infera::ChatMessage& message : request->messages) choice.text += message.content;
  (void)infera::llm::ChatJson("chatcmpl-fuzz", 0, request->model, {choice}, usage);
  (void)infera::llm::ChatChunkJson("chatcmpl-fuzz", 0, request->model, choice, /*first=*/true);
  (void)infera::llm::UsageChunkJson("chatcmpl-fuzz", 0, request->model, "chat.completion.chunk", usage);
  return 0;
}
