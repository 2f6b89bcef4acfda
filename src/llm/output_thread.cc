#include "llm/output_thread.h"

#include <utility>

namespace infera::llm {

OutputThread::OutputThread(const Tokenizer& tokenizer, LlmMetrics* metrics, AbortFn abort)
    : processor_(tokenizer, metrics, std::move(abort)), thread_([this] { Loop(); }) {}

OutputThread::~OutputThread() { Stop(); }

void OutputThread::Push(EngineStepOutput step) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(step));
}

void OutputThread::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void OutputThread::Loop() {
  std::vector<EngineStepOutput> steps;
  while (true) {
    bool stop = false;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](OutputThread* t) ABSL_NO_THREAD_SAFETY_ANALYSIS { return t->stopping_ || !t->queue_.empty(); }, this));
      steps.swap(queue_);
      stop = stopping_;
    }
    for (EngineStepOutput& step : steps) processor_.Process(std::move(step));
    steps.clear();
    if (stop) return;  // everything pushed before Stop() was in this batch
  }
}

}  // namespace infera::llm
