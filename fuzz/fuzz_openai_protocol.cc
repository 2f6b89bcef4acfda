// Fuzz target: the OpenAI request parsers (openai/openai_requests.h), /v1/completions and
// /v1/chat/completions bodies with every sampling field (api/sampling_params_json.h).
//
// Input: byte 0 selects the parser (0 mod 3: completions, otherwise chat; the embeddings
// parser has its own target, fuzz_embeddings_request), the rest is the body.
// An accepted request's own strings (model name, prompt text, message contents) are then
// written back out through the response builders (openai/openai_responses.h), a refused
// request's message through the error builder (openai/openai_errors.h): they must
// produce JSON without crashing whatever bytes those strings hold.
// Chat bodies may carry the structured-output and tool fields (output_constraint.h,
// chat_tools.h): an accepted one has a grammar of at most kMaxGrammarBytes exactly when it
// has a constraint_kind, valid tool names, and its assistant tool calls are rendered back
// as a response's tool_calls.
// Invariants of an accepted request's sampling fields: every real number finite and in
// its range, min_tokens in [0, max_tokens] (completions; chat checks it against the
// default later), logit_bias sorted by id, one entry per id, biases in [-100, 100].
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "openai/openai_errors.h"
#include "openai/openai_requests.h"
#include "openai/openai_responses.h"

namespace {

void CheckSampling(const infera::SamplingParams& p, bool min_tokens_checked) {
  // An output constraint: a bounded grammar with its kind, or neither.
  if (p.grammar.size() > infera::kMaxGrammarBytes || p.grammar.empty() != p.constraint_kind.empty()) std::abort();
  for (double v : {p.temperature, p.top_p, p.min_p, p.repetition_penalty, p.frequency_penalty, p.presence_penalty}) {
    if (!std::isfinite(v)) std::abort();
  }
  if (p.max_tokens < 1 || p.min_tokens < 0 || (min_tokens_checked && p.min_tokens > p.max_tokens)) std::abort();
  for (size_t i = 0; i < p.logit_bias.size(); ++i) {
    const auto& [id, bias] = p.logit_bias[i];
    if (!(bias >= -100.0f && bias <= 100.0f)) std::abort();
    if (i > 0 && p.logit_bias[i - 1].first >= id) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  infera::openai::ChoiceDelta choice;
  infera::openai::Usage usage;
  if (data[0] % 3 == 0) {
    auto request = infera::openai::ParseCompletionRequest(body);
    if (!request.ok()) {
      (void)infera::openai::OpenAiErrorJson(400, std::string(request.status().message()));
      return 0;
    }
    CheckSampling(request->sampling, /*min_tokens_checked=*/true);
    for (const infera::openai::Prompt& prompt : request->prompts) choice.text += prompt.text.value_or("");
    choice.tokens.push_back(choice.text);
    choice.token_bytes.push_back(choice.text);
    choice.logprobs.push_back(-1.0f);
    choice.top.push_back({{choice.text, choice.text, -1.0f}});
    choice.text_offsets.push_back(0);
    (void)infera::openai::CompletionJson("cmpl-fuzz", 0, request->model, {choice, choice}, usage);
    (void)infera::openai::CompletionChunkJson("cmpl-fuzz", 0, request->model, choice);
    return 0;
  }
  auto request = infera::openai::ParseChatRequest(body);
  if (!request.ok()) {
    (void)infera::openai::OpenAiErrorJson(400, std::string(request.status().message()));
    return 0;
  }
  CheckSampling(request->sampling, /*min_tokens_checked=*/request->max_tokens_set);
  for (const infera::ChatTool& tool : request->tools.tools) {
    if (!infera::openai::IsValidToolName(tool.name)) std::abort();
  }
  if (request->tools.tools.size() > infera::openai::kMaxTools) std::abort();
  for (const infera::ChatMessage& message : request->messages) {
    choice.text += message.content;
    // An assistant's calls go back out as a response's tool_calls (names and arguments
    // are the client's bytes).
    for (const infera::ChatToolCall& call : message.tool_calls) {
      choice.tool_calls.push_back({static_cast<int>(choice.tool_calls.size()), call.id, call.name, call.arguments});
    }
  }
  (void)infera::openai::ChatJson("chatcmpl-fuzz", 0, request->model, {choice}, usage);
  (void)infera::openai::ChatChunkJson("chatcmpl-fuzz", 0, request->model, choice, /*first=*/true);
  (void)infera::openai::UsageChunkJson("chatcmpl-fuzz", 0, request->model, "chat.completion.chunk", usage);
  return 0;
}
