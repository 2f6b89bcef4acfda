// Scheduler: decides when and on which model instance each request runs.
//
// The model manager validates a request against the config, wraps it in a
// ScheduledRequest and hands it to the model version's Scheduler. The scheduler owns it
// from then on and guarantees its callback runs exactly once: after execution (through
// the BatchRunner), or with an error if it is rejected (queue full, shutting down).
//
//   ModelVersion::Infer → Scheduler::Enqueue → [queue] → worker thread of instance k
//     → BatchRunner(instance k, requests) → callbacks
//
// Implementation: DynamicBatcher (dynamic_batcher.h), with batching on or off.
#ifndef INFERA_SCHEDULING_SCHEDULER_H_
#define INFERA_SCHEDULING_SCHEDULER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "api/infer_request.h"
#include "backend/backend.h"

namespace infera {

// One validated request waiting to run.
struct ScheduledRequest {
  // Inputs checked against the config, in config order, reshaped for the backend.
  InferRequest request;
  // Rows this request contributes to a batch (its leading dimension); 1 when the
  // model does not batch.
  int64_t batch_size = 1;
  // Completes the request (api/infer_request.h: once, final, unless the model is
  // decoupled; the scheduler itself only ever completes it once, final).
  InferCallback callback;
  std::chrono::steady_clock::time_point enqueue_time{};
  // Set by the scheduler's queue on admission.
  int priority_level = 1;  // 1 = highest
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // A sequence batcher's row for an idle slot (sequence_controls.h): executed for its
  // position only; its result is dropped and it is no request in the statistics.
  bool padding = false;
};

using ScheduledRequests = std::vector<std::unique_ptr<ScheduledRequest>>;

// Runs `requests` as one execution on `instance` and completes every request's
// callback, passing `completions` with each result (ResponseDelivery::batch) so that
// frontends can defer their hand-offs to the batch's end. Provided by the model version
// (it knows the config); called on the instance's worker thread (or inline on an
// enqueuing thread), concurrently from every worker, so it must be thread-safe.
using BatchRunner =
    absl::AnyInvocable<void(ModelInstance& instance, ScheduledRequests requests, CompletionBatch& completions)>;

// Thread-safe.
class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // Takes ownership of `request`. On rejection the callback is called before Enqueue
  // returns (ResourceExhausted when the queue is full, Unavailable when stopping).
  virtual void Enqueue(std::unique_ptr<ScheduledRequest> request) = 0;

  // Requests waiting for an instance (not counting those executing).
  virtual size_t QueueDepth() const = 0;

  // Cumulative load, for utilisation metrics: time the instances spent executing
  // (summed over instances), requests executed, and the number of instances.
  struct Load {
    uint64_t busy_ns = 0;
    uint64_t executed_requests = 0;
    size_t num_instances = 0;
  };
  virtual Load CumulativeLoad() const = 0;

  // Stops intake (later Enqueue calls are rejected with Unavailable), finishes every
  // queued and executing request, and joins the worker threads. Requests still queued at
  // `deadline` are answered Unavailable instead; executing ones are always waited for.
  // Idempotent. IMPORTANT: never call it from a worker thread (from inside a callback).
  virtual void Shutdown(absl::Time deadline) = 0;
  void Shutdown() { Shutdown(absl::InfiniteFuture()); }
};

}  // namespace infera

#endif  // INFERA_SCHEDULING_SCHEDULER_H_
