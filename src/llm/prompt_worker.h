// PromptWorker: one thread that runs the work proportional to a prompt (chat-template
// rendering, tokenisation, the length check) off the HTTP I/O threads, in arrival order,
// from a bounded queue. One per LLM version (llm_backend.h).
//
// Stop() (also the destructor) lets the running task finish, then runs every task still
// queued with `stopped` = true so that each can answer its caller, and joins the thread.
//
// Thread-safe.
//
// Usage:
//   PromptWorker worker(/*max_queued=*/1024);
//   absl::Status queued = worker.Post([](bool stopped) { ... });
#ifndef INFERA_LLM_PROMPT_WORKER_H_
#define INFERA_LLM_PROMPT_WORKER_H_

#include <cstddef>
#include <deque>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace infera::llm {

class PromptWorker {
 public:
  // `stopped`: the worker stopped before the task could run; it must only answer.
  using Task = absl::AnyInvocable<void(bool stopped)>;

  explicit PromptWorker(size_t max_queued);
  ~PromptWorker();
  PromptWorker(const PromptWorker&) = delete;
  PromptWorker& operator=(const PromptWorker&) = delete;

  // Queues `task`. ResourceExhausted when `max_queued` tasks wait, Unavailable after
  // Stop(); the task is then dropped without running.
  absl::Status Post(Task task);

  // See the file comment. Idempotent; not from inside a task.
  void Stop();

 private:
  void Loop();

  const size_t max_queued_;
  absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_PROMPT_WORKER_H_
