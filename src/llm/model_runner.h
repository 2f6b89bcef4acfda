// ModelRunner: runs the model for one engine step.
//
// Execute() takes the scheduler's decision, writes the K/V of every scheduled token into
// the paged KV cache (the runner owns the cache memory; the scheduler owns which block
// holds what), and returns next-token logits for every sequence marked `sample`, in the
// order they appear in the SchedulerOutput: ScheduledSequence::NumLogitsRows() rows each
// (its last token's, or with speculative draft tokens the last 1 + num_draft_tokens
// tokens', in position order). Sampling is not the runner's job (see
// sampler.h), so a fake runner for scheduler and engine tests only produces logits.
//
// Not thread-safe: owned and called by the engine thread.
#ifndef INFERA_LLM_MODEL_RUNNER_H_
#define INFERA_LLM_MODEL_RUNNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "llm/scheduler_output.h"

namespace infera::llm {

struct ModelRunnerOutput {
  int64_t vocab_size = 0;
  // Row-major [SchedulerOutput::NumLogitsRows(), vocab_size].
  std::vector<float> logits;
  const float* Row(size_t i) const { return logits.data() + i * vocab_size; }
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual absl::StatusOr<ModelRunnerOutput> Execute(const SchedulerOutput& step) = 0;
  virtual int64_t vocab_size() const = 0;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_MODEL_RUNNER_H_
