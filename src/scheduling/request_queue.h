// RequestQueue: the requests of one model version waiting for an instance, by priority
// level, with per-level bounds and timeouts.
//
//   level 1:  main [r1 r4 r7]  delayed [r2]     <- candidates are taken in this order:
//   level 2:  main [r3 r5]     delayed []          main1, delayed1, main2, delayed2, ...
//
// A request's level comes from its `priority` parameter (0/absent: the default level),
// its deadline from the level's default timeout and, where allowed, its `timeout`
// parameter (µs). Sweep() removes cancelled requests and applies each level's
// timeout_action to expired ones: REJECT hands them back to be failed, DELAY moves them
// behind every live request of their own and higher levels (Triton's semantics).
//
// Not thread-safe: owned by a DynamicBatcher and used under its mutex.
#ifndef INFERA_SCHEDULING_REQUEST_QUEUE_H_
#define INFERA_SCHEDULING_REQUEST_QUEUE_H_

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "api/parameters.h"
#include "common/clock.h"
#include "scheduling/scheduler.h"
#include "scheduling/scheduling_options.h"

namespace infera {

class RequestQueue {
 public:
  // A request the queue would not keep, handed back with the reason.
  struct Rejection {
    std::unique_ptr<ScheduledRequest> request;
    absl::Status status;
  };

  explicit RequestQueue(const SchedulingOptions& options);

  // What Push() tells about an admitted request.
  struct Admitted {
    std::optional<SteadyTime> deadline;  // its queue deadline, if any
    bool head = false;  // it is first in candidate order (the next batch's head)
  };

  // Admits `request` at `now`. Returns it back when it cannot be queued: its level is
  // full (ResourceExhausted) or its priority/timeout parameters are invalid
  // (InvalidArgument). When admitted and `admitted` is not null, fills it in.
  std::optional<Rejection> Push(std::unique_ptr<ScheduledRequest> request, SteadyTime now,
                                Admitted* admitted = nullptr);

  // InvalidArgument when the request's `priority` or `timeout` parameter is invalid
  // (what Push() would reject it for, apart from a full queue): not an integer (a
  // string, a bool, a number with a fraction or an exponent such as 1e300: ignoring it
  // would run the request without the deadline or level asked for), a priority outside
  // the levels, a negative timeout or one past kMaxTimeoutMicros (1 day).
  absl::Status CheckParameters(const ScheduledRequest& request) const;
  // The type part of CheckParameters, for schedulers that read the same parameters.
  static absl::Status CheckParameterTypes(const Parameters& parameters);

  // Removes cancelled requests (Cancelled) and expired REJECT-level ones
  // (DeadlineExceeded), returned to be completed; moves expired DELAY-level ones back.
  std::vector<Rejection> Sweep(SteadyTime now);

  // The next batch's requests, in order: the first request, then later ones whose
  // non-batch input shapes equal its, while the rows stay <= `max_rows`. With
  // `max_rows` 0 only the first request. Pointers stay valid until the queue changes.
  std::vector<const ScheduledRequest*> Candidates(int64_t max_rows) const;

  // Removes and returns `chosen` (a prefix of, or all of, the last Candidates()).
  ScheduledRequests Take(const std::vector<const ScheduledRequest*>& chosen);

  // Removes everything (at shutdown, after the workers are gone).
  ScheduledRequests TakeAll();

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Rows of every queued request (their batch_size), whatever their shapes: an upper
  // bound of the rows the next Candidates() can hold.
  int64_t rows() const { return rows_; }
  // Earliest deadline of a request still waiting in a main list.
  std::optional<SteadyTime> EarliestDeadline() const;

 private:
  struct Level {
    QueuePolicy policy;
    std::deque<std::unique_ptr<ScheduledRequest>> main;
    std::deque<std::unique_ptr<ScheduledRequest>> delayed;
    size_t size() const { return main.size() + delayed.size(); }
  };
  // Visits every queued request in candidate order; `fn` returns false to stop.
  template <typename Fn>
  void ForEach(Fn&& fn) const;

  std::vector<Level> levels_;
  int default_level_;
  size_t size_ = 0;
  int64_t rows_ = 0;
};

// True when `a` and `b` may share a batch: same inputs with the same non-batch shapes.
bool BatchCompatible(const InferRequest& a, const InferRequest& b);

}  // namespace infera

#endif  // INFERA_SCHEDULING_REQUEST_QUEUE_H_
