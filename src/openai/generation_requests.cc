#include "openai/generation_requests.h"

namespace infera::openai {
namespace {

// Choice `index_in_n` of a prompt: vLLM's child seed (seed + index).
void SeedChoice(SamplingParams& sampling, int index_in_n) {
  if (sampling.seed) sampling.seed = *sampling.seed + static_cast<uint64_t>(index_in_n);
}

}  // namespace

std::vector<GenerationRequest> CompletionGenerations(const CompletionRequest& request,
                                                     std::chrono::steady_clock::time_point arrival) {
  std::vector<GenerationRequest> generations;
  generations.reserve(request.prompts.size() * static_cast<size_t>(request.n));
  for (const Prompt& prompt : request.prompts) {
    for (int k = 0; k < request.n; ++k) {
      GenerationRequest& g = generations.emplace_back();
      g.prompt_text = prompt.text;
      g.prompt_ids = prompt.ids;
      g.echo = request.echo;
      g.sampling = request.sampling;
      SeedChoice(g.sampling, k);
      g.priority = request.priority;
      g.arrival_time = arrival;
    }
  }
  return generations;
}

std::vector<GenerationRequest> ChatGenerations(const ChatRequest& request,
                                               std::chrono::steady_clock::time_point arrival) {
  std::vector<GenerationRequest> generations;
  generations.reserve(static_cast<size_t>(request.n));
  for (int k = 0; k < request.n; ++k) {
    GenerationRequest& g = generations.emplace_back();
    g.messages = request.messages;
    g.add_generation_prompt = request.add_generation_prompt;
    g.tools = request.tools.tools;  // rendered whatever tool_choice is (vLLM's default)
    g.sampling = request.sampling;
    SeedChoice(g.sampling, k);
    g.max_tokens_set = request.max_tokens_set;
    g.priority = request.priority;
    g.arrival_time = arrival;
  }
  return generations;
}

}  // namespace infera::openai
