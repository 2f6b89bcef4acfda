// OutputProcessor: turns the engine's token ids into each request's GenerationOutputs
// (vLLM v1's OutputProcessor) — incremental detokenisation, stop strings, logprobs, the
// per-token and per-request metrics, and the timings of the final output.
//
// It consumes one EngineStepOutput per engine step (engine_output.h), in step order:
//   added      → a RequestState: the request's TextStream and callback;
//   scheduled  → its queue time and cached prompt tokens;
//   outputs    → per new token: TTFT / inter-token metrics, the token pushed through the
//                TextStream, one GenerationOutput (new text, the token id, its logprob and
//                top logprobs, counts) to the callback; on the request's end the final
//                output (the text the stream held back, finish reason, error, timings).
// A stop string found in the text finishes the request here (finish_reason kStop, the
// text cut before the stop string) and, when the engine still runs it, `abort`s it there
// (LlmEngine::Abort: the engine frees its blocks at its next step) — before the final
// output is delivered, so whoever sees the final output knows the engine has been told.
// Outputs the engine sends for a request after that are discarded: never delivered,
// never counted.
//
// Token accounting (vLLM v1's): generation_tokens, the inter-token and TTFT histograms
// and the per-request generation-token histogram count the tokens processed here for a
// live request — every token a client receives in `token_ids`, including the one that
// completed a stop string — so they equal the usage reported to clients. Tokens the
// engine generated after a stop-string hit (before its abort arrived) are counted nowhere.
//
// Callbacks run on the calling thread (the output thread) and must not block; a request's
// callback is called serially, never after its final output.
//
// Not thread-safe: owned by one thread (OutputThread's; tests call it directly).
#ifndef INFERA_LLM_OUTPUT_PROCESSOR_H_
#define INFERA_LLM_OUTPUT_PROCESSOR_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "llm/engine_output.h"
#include "llm/llm_metrics.h"
#include "llm/text_imports.h"
#include "llm/text_stream.h"

namespace infera::llm {

class OutputProcessor {
 public:
  using Clock = absl::AnyInvocable<std::chrono::steady_clock::time_point() const>;
  using AbortFn = absl::AnyInvocable<void(RequestId)>;

  // `tokenizer` and `metrics` outlive the processor. `abort` tells the engine to drop a
  // request (see the file comment). `clock` times the output processing
  // (GenerationTimings::detokenize) and the final output (`finished`); default: steady_clock.
  OutputProcessor(const Tokenizer& tokenizer, LlmMetrics* metrics, AbortFn abort, Clock clock = nullptr);
  OutputProcessor(const OutputProcessor&) = delete;
  OutputProcessor& operator=(const OutputProcessor&) = delete;

  // Processes one step's hand-off (see the file comment).
  void Process(EngineStepOutput step);

  // Requests registered and not yet finished.
  size_t num_requests() const { return requests_.size(); }

 private:
  struct RequestState {
    OutputCallback callback;
    std::unique_ptr<TextStream> text;
    bool logprobs = false;
    int64_t num_prompt_tokens = 0;
    int64_t num_output_tokens = 0;
    int64_t num_cached_tokens = 0;
    double queue_seconds = 0;  // arrival → first scheduled (0 if never scheduled)
    GenerationTimings timings;  // arrival, queued, scheduled, first token, detokenize so far
    std::chrono::steady_clock::time_point last_token{};
  };
  using RequestMap = std::unordered_map<RequestId, RequestState>;

  // One engine output of a live request.
  void ProcessOutput(RequestMap::iterator it, EngineRequestOutput& engine_output,
                     std::chrono::steady_clock::time_point step_time);
  // Records the request's end in the metrics, fills the final output's counts and
  // timings, forgets the request and calls its callback with `out`.
  void Finish(RequestMap::iterator it, RequestOutput out);
  std::chrono::steady_clock::time_point Now() const;

  const Tokenizer& tokenizer_;
  LlmMetrics* const metrics_;
  AbortFn abort_;
  const Clock clock_;
  RequestMap requests_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_OUTPUT_PROCESSOR_H_
