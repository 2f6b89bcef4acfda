// EngineStepOutput: what the LLM engine hands its output processor after each step — the
// one hand-off between the engine thread and the output thread (vLLM v1's
// EngineCoreOutputs). The engine deals in token ids only; the output processor
// (output_processor.h) owns everything about text.
//
//   engine thread, one loop iteration            output thread
//     admitted requests      → added             registers each (TextStream, callback)
//     first scheduled        → scheduled          queue time, cached prompt tokens
//     sampled tokens, ends   → outputs            detokenise, stop strings, metrics,
//                                                 GenerationOutput → the request's callback
//
// Within one hand-off a request's registration (`added`) comes before anything else about
// it, and hand-offs arrive in step order, so the output processor never sees a request it
// was not told about — except outputs of a request it has itself finished (a stop string)
// before the engine learnt it: those are discarded.
//
// Plain values; built on the engine thread, moved to the output thread.
#ifndef INFERA_LLM_ENGINE_OUTPUT_H_
#define INFERA_LLM_ENGINE_OUTPUT_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "api/generation.h"
#include "api/sampling_params.h"
#include "llm/scheduler.h"
#include "llm/scheduler_output.h"

namespace infera::llm {

// One streamed piece of a request's result (api/generation.h's GenerationOutput). Every
// request gets one or more outputs; the last has finish_reason != kNone.
using RequestOutput = infera::GenerationOutput;
using OutputCallback = absl::AnyInvocable<void(RequestOutput)>;

// A request the engine admitted: what the output processor needs to serve it.
struct NewOutputRequest {
  RequestId id = 0;
  OutputCallback callback;
  SamplingParams sampling;  // stop strings, skip_special_tokens, logprobs
  int64_t num_prompt_tokens = 0;
  std::chrono::steady_clock::time_point arrival{};  // the request was read
  std::chrono::steady_clock::time_point queued{};   // LlmEngine::AddRequest accepted it
};

// A request's first step.
struct ScheduledEvent {
  RequestId id = 0;
  std::chrono::steady_clock::time_point time{};
  int64_t num_cached_tokens = 0;  // prompt tokens served from the prefix cache
};

// What the engine says about one request in one step: a new token, an end, or both.
struct EngineRequestOutput {
  RequestId id = 0;
  std::optional<SampledToken> token;
  // The engine's reason (kNone: still running): kStop (EOS or a stop token id), kLength,
  // kAbort (cancelled, deadline, shutdown: `error` says which), kError (a failed step).
  // Stop strings are the output processor's to find.
  FinishReason finish_reason = FinishReason::kNone;
  absl::Status error;
};

struct EngineStepOutput {
  std::vector<NewOutputRequest> added;
  std::vector<ScheduledEvent> scheduled;
  std::vector<EngineRequestOutput> outputs;
  // When the step's tokens were sampled (time to first token and inter-token gaps are
  // measured here, so that time spent waiting for the output thread does not count).
  std::chrono::steady_clock::time_point time{};

  bool empty() const { return added.empty() && scheduled.empty() && outputs.empty(); }
};

}  // namespace infera::llm

#endif  // INFERA_LLM_ENGINE_OUTPUT_H_
