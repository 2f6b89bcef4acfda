#include "manager/decoupled_response_sink.h"

#include <algorithm>

#include "common/clock.h"
#include "common/status.h"
#include "manager/model_version.h"
#include "manager/output_check.h"

namespace infera {
namespace {

using SteadyClock = std::chrono::steady_clock;

}  // namespace

DecoupledResponseSink::DecoupledResponseSink(ModelHandle version, ScheduledRequest&& request,
                                             SteadyClock::time_point started)
    : version_(std::move(version)),
      request_(std::move(request.request)),
      batch_size_(request.batch_size),
      callback_(std::move(request.callback)),
      enqueue_time_(request.enqueue_time),
      started_(started),
      deadline_(request.deadline) {}

DecoupledResponseSink::~DecoupledResponseSink() {
  // The sender finishes every request (a sender destroyed unfinished fails it), so only
  // a sink that never had a sender can get here unanswered.
  if (version_) Deliver(absl::InternalError("the request was dropped before its model answered it"), true);
}

RequestContext DecoupledResponseSink::context() const {
  return RequestContext{&request_.parameters, request_.cancellation, deadline_,
                        version_ && version_->config().max_batch_size() > 0 ? batch_size_ : 1, request_.token_meter};
}

bool DecoupledResponseSink::IsStopped() const {
  if (request_.cancellation && request_.cancellation->IsCancelled()) return true;
  if (deadline_ && *deadline_ <= SteadyClock::now()) return true;
  return version_ && version_->outstanding_work_cancelled();
}

absl::Status DecoupledResponseSink::Send(std::vector<Tensor> outputs, bool final) {
  if (!version_) return absl::FailedPreconditionError("the request already has its final response");
  if (IsStopped()) {
    // Nobody waits for more: end the request now, and tell the backend to stop.
    absl::Status stopped = request_.cancellation && request_.cancellation->IsCancelled()
                               ? absl::CancelledError("request cancelled by the client")
                           : version_->outstanding_work_cancelled()
                               ? absl::CancelledError("the model version is being unloaded")
                               : absl::DeadlineExceededError("request timed out while its model answered it");
    Deliver(stopped, true);
    return stopped;
  }
  const inference::ModelConfig& config = version_->config();
  absl::Status checked = CheckOutputSubset(config, config.max_batch_size() > 0 ? batch_size_ : 0, outputs);
  if (!checked.ok()) {
    Deliver(checked, true);
    return checked;
  }
  InferResponse response;
  response.model_name = version_->name();
  response.model_version = version_->version();
  response.id = request_.id;
  response.outputs = SelectOutputs(std::move(outputs), request_.outputs);
  if (absl::Status classified =
          ApplyClassification(config, version_->labels_, request_.outputs, response.outputs);
      !classified.ok()) {
    Deliver(classified, true);
    return classified;
  }
  response.timings = {enqueue_time_, started_, SteadyClock::now(), batch_size_, 1};
  Deliver(std::move(response), final);
  return absl::OkStatus();
}

void DecoupledResponseSink::Finish(absl::Status status) {
  if (!version_) return;
  if (!status.ok()) return Deliver(std::move(status), true);
  // The empty final response: OK, no outputs.
  InferResponse response;
  response.model_name = version_->name();
  response.model_version = version_->version();
  response.id = request_.id;
  response.timings = {enqueue_time_, started_, SteadyClock::now(), batch_size_, 1};
  Deliver(std::move(response), true);
}

void DecoupledResponseSink::Deliver(absl::StatusOr<InferResponse> result, bool final) {
  ++responses_;
  if (final && result.ok()) {
    ModelVersion& v = *version_;
    const SteadyClock::time_point now = SteadyClock::now();
    const int64_t rows = v.config().max_batch_size() > 0 ? batch_size_ : 1;
    v.statistics_.RecordExecution(1, rows, 0, NanosBetween(started_, now), 0);
    v.statistics_.RecordSuccess(NanosBetween(request_.arrival_time, now), NanosBetween(enqueue_time_, started_), rows);
    if (generation_timings_) result->generation = generation_timings_;
  }
  // The callback (ModelVersion::Infer's) counts a failure and the end of the request
  // on the final call; the version stays held until it returns.
  callback_(std::move(result), ResponseDelivery{final, nullptr});
  if (final) version_.reset();
}

}  // namespace infera
