// RepeatResponder: the thread a loaded `repeat` model answers its decoupled requests from
// (repeat_backend.cc; Triton's repeat_int32 test model).
//
// Each request is a RepeatJob: its values, the delay before each response and the wait
// before the final flag. The responder keeps every job in flight on one thread, ordered by
// when its next step is due: a response (OUT = values[i], IDX = i) or, after the last one,
// the final flag (ResponseSender::Finish(): Triton's empty final response). So many
// requests interleave on one thread and no thread is held per request.
//
// Stopping: before each step the job's sender is asked IsStopped() (client gone, deadline,
// unload); a stopped job ends at once with Cancelled / DeadlineExceeded and sends nothing
// more. While jobs wait, the thread also wakes every kStopCheck to look, so a request
// with a long delay stops within that time, not at its next due step.
// CancelAll() (LoadedModel::CancelOutstandingWork, and the destructor) ends every job with
// Cancelled, joins the thread, and makes Add() refuse later jobs (Unavailable).
//
// Thread-safe: Add() and CancelAll() from any thread; the jobs are touched by the
// responder thread only (and by CancelAll after the join).
#ifndef INFERA_BACKEND_BUILTIN_REPEAT_RESPONDER_H_
#define INFERA_BACKEND_BUILTIN_REPEAT_RESPONDER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "backend/execution_context.h"
#include "backend/response_sender.h"

namespace infera {

struct RepeatJob {
  ResponseSender sender;
  RequestContext context;  // the request's; valid while `sender` is (it points into its sink)
  std::vector<int32_t> values;
  // Milliseconds before each response: empty (none), one value (every response), or one
  // per value.
  std::vector<uint32_t> delays_ms;
  uint32_t wait_ms = 0;  // milliseconds after the last response, before the final flag
};

class RepeatResponder {
 public:
  // How often a waiting thread looks for stopped jobs.
  static constexpr std::chrono::milliseconds kStopCheck{20};

  // `model` names the model in logs and errors.
  explicit RepeatResponder(std::string model);
  ~RepeatResponder();  // CancelAll()
  RepeatResponder(const RepeatResponder&) = delete;
  RepeatResponder& operator=(const RepeatResponder&) = delete;

  // Starts answering `job` (its first response is due after its first delay).
  void Add(RepeatJob job);
  // See the file comment. Idempotent.
  void CancelAll();
  // Jobs not finished yet (tests).
  size_t InFlight() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    explicit Pending(RepeatJob j) : job(std::move(j)) {}
    RepeatJob job;
    size_t next = 0;        // index of the next response
    Clock::time_point due;  // when the next step is due
  };

  void Run();
  // Runs one due (or stopped) job's next step; returns it when it has more to do.
  std::unique_ptr<Pending> Step(std::unique_ptr<Pending> pending);
  Clock::duration DelayBefore(const Pending& pending) const;
  bool ShouldWake() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string model_;
  absl::Mutex cancel_mu_;  // serialises CancelAll (one join)
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Pending>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool added_ ABSL_GUARDED_BY(mu_) = false;  // a job arrived since the thread last looked
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // started last, joined by CancelAll
};

}  // namespace infera

#endif  // INFERA_BACKEND_BUILTIN_REPEAT_RESPONDER_H_
