// OutputThread: the LLM's output thread — runs an OutputProcessor (output_processor.h)
// beside the engine thread, fed one EngineStepOutput per engine step.
//
//   engine thread ── Push(step) ──► queue (mutex) ──► output thread: OutputProcessor::Process
//        ▲                                                   │ stop strings found
//        └──────────────── abort(id) ◄──────────────────────┘
//
// Push() only queues (one short lock per step); the output thread takes every queued step
// at once and processes them in order, handing each request it finishes on a stop string
// to `abort` (LlmEngine::Abort: the engine frees it at its next step). The
// queue is unbounded, but it holds at most the steps the engine ran while the output thread
// was busy, and processing a step costs far less than running it.
//
// Stop() processes everything pushed before it, then joins the thread (so every request
// registered gets its final output before Stop returns). IMPORTANT: Push() only before
// Stop(); LlmEngine stops the output thread after joining the engine thread.
//
// Thread-safe.
#ifndef INFERA_LLM_OUTPUT_THREAD_H_
#define INFERA_LLM_OUTPUT_THREAD_H_

#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "llm/engine_output.h"
#include "llm/llm_metrics.h"
#include "llm/output_processor.h"
#include "llm/text_imports.h"

namespace infera::llm {

class OutputThread {
 public:
  using AbortFn = OutputProcessor::AbortFn;

  // Starts the thread. `tokenizer` and `metrics` outlive it; `abort` is called on the
  // output thread.
  OutputThread(const Tokenizer& tokenizer, LlmMetrics* metrics, AbortFn abort);
  ~OutputThread();
  OutputThread(const OutputThread&) = delete;
  OutputThread& operator=(const OutputThread&) = delete;

  void Push(EngineStepOutput step);
  // See the file comment. Idempotent.
  void Stop();

 private:
  void Loop();

  OutputProcessor processor_;  // output thread only
  absl::Mutex mu_;
  std::vector<EngineStepOutput> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_OUTPUT_THREAD_H_
