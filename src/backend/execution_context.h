// ExecutionContext: what a backend learns about the requests of one execution besides
// their tensors — each request's parameters, cancellation token, deadline and rows, and
// whether the execution is a warm-up run (Triton's TRITONBACKEND_Request accessors, as a
// value). ModelVersion builds one per execution; backends read it (docs/request_path.md).
//
// Before an execution starts, ModelVersion has already answered every request that was
// cancelled or past its deadline, so a backend that cannot stop midway (a torch forward)
// needs nothing more; one that can (a batch of images, an engine step) may ask
// AllStopped() between its steps and give up early (any answer it then produces is
// dropped).
//
// Not thread-safe: valid for the duration of the Execute() call it is passed to.
#ifndef INFERA_BACKEND_EXECUTION_CONTEXT_H_
#define INFERA_BACKEND_EXECUTION_CONTEXT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "api/cancellation.h"
#include "api/parameters.h"
#include "api/token_meter.h"

namespace infera {

// One request of an execution.
struct RequestContext {
  const Parameters* parameters = nullptr;  // the request's; never null
  // Null: never cancelled. Shared, so that a decoupled model may hand it on to work that
  // outlives the call (an LLM generation).
  std::shared_ptr<const CancellationToken> cancellation;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  int64_t rows = 1;  // its rows in the batch (1 when the model does not batch)
  // The request's token meter (InferRequest::token_meter): a text generator charges the
  // tokens of each generation to it as the generation ends. Null: not metered.
  std::shared_ptr<TokenMeter> token_meter{};

  // Cancelled by the client, or past its deadline at `now`.
  bool Stopped(std::chrono::steady_clock::time_point now) const {
    return (cancellation != nullptr && cancellation->IsCancelled()) || (deadline && *deadline <= now);
  }
};

class ExecutionContext {
 public:
  ExecutionContext() = default;
  // An execution that is not on the instance's worker thread: the config's model_warmup
  // samples (run by ModelVersion::Load on the loading thread) and load-time probes.
  // --cpu-placement pinned tells them apart: an instance pins the thread of its first
  // execution that is not one of these (its worker).
  static ExecutionContext Warmup() {
    ExecutionContext context;
    context.warmup_ = true;
    return context;
  }

  void Add(RequestContext request) { requests_.push_back(request); }
  // Inline storage for a few requests: no allocation per execution on the common path.
  using Requests = absl::InlinedVector<RequestContext, 4>;
  const Requests& requests() const { return requests_; }
  bool is_warmup() const { return warmup_; }

  // True when every request of the execution was cancelled or is past its deadline:
  // nobody waits for the result any more. False for an execution with no requests
  // (a warm-up).
  bool AllStopped() const {
    if (requests_.empty()) return false;
    const auto now = std::chrono::steady_clock::now();
    for (const RequestContext& r : requests_) {
      if (!r.Stopped(now)) return false;
    }
    return true;
  }

 private:
  Requests requests_;
  bool warmup_ = false;
};

}  // namespace infera

#endif  // INFERA_BACKEND_EXECUTION_CONTEXT_H_
