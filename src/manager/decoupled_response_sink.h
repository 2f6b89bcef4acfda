// DecoupledResponseSink: the model version's side of one decoupled request — what a
// backend's ResponseSender (backend/response_sender.h) writes into. It checks each
// response against the config (CheckOutputSubset), selects the outputs the client asked
// for, answers classifications, and delivers each response to the request's callback
// (final = false, then final = true once); on the final response it records the request
// in the version's statistics (queue = enqueued → its execution started, compute = the
// rest) and lets go of the version.
//
// It owns the request's parameters, cancellation token and deadline, so the
// RequestContext it hands the backend (context()) stays valid as long as the sender.
// It holds a ModelHandle to the version until the final response, so an unload waits for
// the request (bounded by its drain deadline, after which CancelOutstandingWork makes
// IsStopped() true and the backend ends the request).
//
// Thread-compatible: its one ResponseSender calls it serially (possibly from different
// threads over time, handed over with the sender); IsStopped() may be read from any
// thread.
#ifndef INFERA_MANAGER_DECOUPLED_RESPONSE_SINK_H_
#define INFERA_MANAGER_DECOUPLED_RESPONSE_SINK_H_

#include <chrono>
#include <optional>
#include <vector>

#include "backend/response_sender.h"
#include "manager/model_handle.h"
#include "scheduling/scheduler.h"

namespace infera {

class DecoupledResponseSink final : public ResponseSink {
 public:
  // `version` is `request`'s version (a counted handle), `started` when its execution
  // began (the end of its queue time).
  DecoupledResponseSink(ModelHandle version, ScheduledRequest&& request,
                        std::chrono::steady_clock::time_point started);
  ~DecoupledResponseSink() override;

  // The request's context for the backend; points into this sink.
  RequestContext context() const;
  // The request's inputs (in config order, reshaped), once.
  std::vector<Tensor> TakeInputs() { return std::move(request_.inputs); }

  absl::Status Send(std::vector<Tensor> outputs, bool final) override;
  void Finish(absl::Status status) override;
  void SetGenerationTimings(const GenerationTimings& timings) override { generation_timings_ = timings; }
  bool IsStopped() const override;

 private:
  // Delivers `result`; when `final`, records the request and releases the version.
  void Deliver(absl::StatusOr<InferResponse> result, bool final);

  ModelHandle version_;  // empty once the final response is delivered
  InferRequest request_;
  int64_t batch_size_;
  InferCallback callback_;
  std::chrono::steady_clock::time_point enqueue_time_, started_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::optional<GenerationTimings> generation_timings_;
  int64_t responses_ = 0;
};

}  // namespace infera

#endif  // INFERA_MANAGER_DECOUPLED_RESPONSE_SINK_H_
