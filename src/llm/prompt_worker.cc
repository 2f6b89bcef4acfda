#include "llm/prompt_worker.h"

#include <utility>

#include "common/str_cat.h"

namespace infera::llm {

PromptWorker::PromptWorker(size_t max_queued) : max_queued_(max_queued) {
  thread_ = std::thread([this] { Loop(); });
}

PromptWorker::~PromptWorker() { Stop(); }

absl::Status PromptWorker::Post(Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the model is being unloaded");
  if (queue_.size() >= max_queued_) {
    return absl::ResourceExhaustedError(
        StrCat("the LLM has ", max_queued_, " prompts waiting to be tokenised; try again later"));
  }
  queue_.push_back(std::move(task));
  return absl::OkStatus();
}

void PromptWorker::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void PromptWorker::Loop() {
  while (true) {
    Task task;
    bool stopped = false;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](PromptWorker* w) ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->stopping_ || !w->queue_.empty(); }, this));
      if (queue_.empty()) return;  // stopping, nothing left to answer
      task = std::move(queue_.front());
      queue_.pop_front();
      stopped = stopping_;
    }
    task(stopped);
  }
}

}  // namespace infera::llm
