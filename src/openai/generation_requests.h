// From a parsed OpenAI request to the model's generations: one GenerationRequest
// (api/generation.h) per choice, in OpenAI's prompt-major order (choice index = prompt
// · n + k). Choice k of a prompt with a seed samples with seed + k (vLLM's child-request
// seeds), so that n seeded choices differ yet repeat across calls. Every choice arrives
// at `arrival` (the request was read) and carries the request's priority.
//
// Completions: the prompt's text or token ids, `echo`, and max_tokens as given (16
// when unset, OpenAI's default). Chat: the messages with add_generation_prompt, and
// max_tokens — when unset — whatever the model's context leaves after the prompt
// (GenerationRequest::max_tokens_set false), as vLLM does; the tools, which the chat
// template renders (also with tool_choice none, as vLLM by default). The output
// constraint (SamplingParams::grammar) is the parsed request's.
//
// Cancellation is the caller's (the generation job sets it).
//
// Thread-safe (pure functions).
#ifndef INFERA_OPENAI_GENERATION_REQUESTS_H_
#define INFERA_OPENAI_GENERATION_REQUESTS_H_

#include <chrono>
#include <vector>

#include "api/generation.h"
#include "openai/openai_requests.h"

namespace infera::openai {

std::vector<GenerationRequest> CompletionGenerations(const CompletionRequest& request,
                                                     std::chrono::steady_clock::time_point arrival);
std::vector<GenerationRequest> ChatGenerations(const ChatRequest& request,
                                               std::chrono::steady_clock::time_point arrival);

}  // namespace infera::openai

#endif  // INFERA_OPENAI_GENERATION_REQUESTS_H_
