// Requests of the OpenAI-compatible API (POST /v1/completions, /v1/chat/completions)
// for `infera bench --service-kind openai`, encoded once before the run, with synthetic
// prompts as vLLM's "random" dataset makes them:
//
//   completions  "prompt": [token ids]  — exactly `input_tokens` ids, random in
//                [id_low, id_high) (seeded), so the prompt length is exact whatever the
//                tokenizer;
//   chat         "messages": [{"role": "user", "content": text}] — `input_tokens` random
//                words from a small English list (about one token each; chat needs text).
//
// Every request streams ("stream": true, "stream_options": {"include_usage": true}),
// asks for exactly `output_tokens` ("max_tokens", "ignore_eos": true — vLLM's and
// infera's extension), and samples greedily ("temperature": 0), so runs are comparable.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_OPENAI_PAYLOAD_H_
#define INFERA_TOOLS_BENCH_OPENAI_PAYLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

namespace infera::bench {

struct OpenAiRequestOptions {
  std::string host;  // the Host header
  std::string model;
  bool chat = false;  // /v1/chat/completions instead of /v1/completions
  int64_t input_tokens = 64;
  int64_t output_tokens = 64;
  int64_t id_low = 0;  // random prompt token ids in [id_low, id_high)
  int64_t id_high = 100;
};

// `count` requests (complete HTTP/1.1 text), each with its own prompt from `seed`.
std::vector<std::string> MakeOpenAiHttpRequests(const OpenAiRequestOptions& options, int count, uint64_t seed);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_OPENAI_PAYLOAD_H_
