#include "grpc/stream_infer_reactor.h"

#include <string>
#include <utility>

#include "grpc/grpc_status.h"

namespace infera {

StreamInferReactor::StreamInferReactor(const ModelManager& manager, Options options,
                                       StreamRegistry* registry, InferCallMetadata metadata)
    : manager_(manager), options_(std::move(options)), registry_(registry), metadata_(std::move(metadata)) {
  const bool draining = registry_ != nullptr && registry_->Add(this);
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    draining_ = draining;
    MaybeReadLocked(actions);
    MaybeFinishLocked(actions);
  }
  Run(actions);
}

void StreamInferReactor::OnReadDone(bool ok) {
  Actions actions;
  std::shared_ptr<inference::ModelInferRequest> message;
  {
    absl::MutexLock lock(&mu_);
    read_in_flight_ = false;
    if (!ok || finished_) {  // the client half-closed, or the stream already ended
      reads_done_ = reads_done_ || !ok;
      MaybeFinishLocked(actions);
    } else {
      processing_ = true;  // keeps the stream from finishing under our feet
      message = std::move(reading_);
      ++pending_;
    }
  }
  if (message == nullptr) return Run(actions);
  Process(std::move(message));
  {
    absl::MutexLock lock(&mu_);
    processing_ = false;
    MaybeReadLocked(actions);
    MaybeFinishLocked(actions);
  }
  Run(actions);
}

void StreamInferReactor::Process(std::shared_ptr<inference::ModelInferRequest> message) {
  auto response = std::make_unique<Response>();
  inference::ModelInferResponse* infer_response = response->mutable_infer_response();
  const inference::ModelInferRequest& request = *message;
  RunModelInfer(manager_, request, message, cancellation_, options_.infer, metadata_, infer_response,
                [this, message, response = std::move(response)](absl::Status status, std::string_view) mutable {
                  if (!status.ok()) {
                    inference::ModelInferResponse* r = response->mutable_infer_response();
                    r->Clear();
                    r->set_model_name(message->model_name());
                    r->set_model_version(message->model_version());
                    r->set_id(message->id());
                    response->set_error_message(
                        std::string(status.message().data(), status.message().size()));
                  }
                  message.reset();
                  Respond(std::move(response));
                });
}

void StreamInferReactor::Respond(std::unique_ptr<Response> response) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    if (broken_) {
      --pending_;  // nobody to send it to
    } else {
      write_queue_.push_back(std::move(response));
      MaybeWriteLocked(actions);
    }
    MaybeFinishLocked(actions);
  }
  Run(actions);
}

void StreamInferReactor::OnWriteDone(bool ok) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    writing_.reset();
    --pending_;
    if (!ok) BreakLocked();  // the client is gone
    MaybeWriteLocked(actions);
    MaybeReadLocked(actions);
    MaybeFinishLocked(actions);
  }
  Run(actions);
}

void StreamInferReactor::OnCancel() {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    BreakLocked();
    MaybeFinishLocked(actions);
  }
  Run(actions);
}

void StreamInferReactor::OnDone() {
  if (registry_ != nullptr) registry_->Remove(this);
  delete this;
}

bool StreamInferReactor::BeginDrain() {
  Actions actions;
  absl::MutexLock lock(&mu_);
  draining_ = true;
  MaybeFinishLocked(actions);
  return actions.finish;
}

void StreamInferReactor::FinishDrained() {
  Finish(ToGrpcStatus(absl::UnavailableError("server is shutting down")));
}

void StreamInferReactor::BreakLocked() {
  cancellation_->Cancel();
  if (broken_) return;
  broken_ = true;
  pending_ -= write_queue_.size();  // answers still queued go nowhere
  write_queue_.clear();
}

void StreamInferReactor::MaybeReadLocked(Actions& actions) {
  if (read_in_flight_ || processing_ || reads_done_ || broken_ || draining_ || finished_ ||
      pending_ >= options_.max_pending) {
    return;
  }
  read_in_flight_ = true;
  reading_ = std::make_shared<inference::ModelInferRequest>();
  actions.read = reading_.get();
}

void StreamInferReactor::MaybeWriteLocked(Actions& actions) {
  if (writing_ || write_queue_.empty() || broken_) return;
  writing_ = std::move(write_queue_.front());
  write_queue_.pop_front();
  actions.write = writing_.get();
}

void StreamInferReactor::MaybeFinishLocked(Actions& actions) {
  if (finished_ || processing_ || writing_ || pending_ > 0) return;
  // Normally the outstanding read must come back first (it does once the client
  // half-closes or the call is cancelled). A draining stream finishes without it: the
  // read then completes after Finish and is ignored.
  if (!draining_ && (read_in_flight_ || (!reads_done_ && !broken_))) return;
  finished_ = true;
  actions.finish = true;
  if (broken_) {
    actions.finish_status = ToGrpcStatus(absl::CancelledError("stream cancelled"));
  } else if (!reads_done_) {
    actions.finish_status = ToGrpcStatus(absl::UnavailableError("server is shutting down"));
  }
}

void StreamInferReactor::Run(const Actions& actions) {
  // A finishing stream has nothing else to start; once Finish is called the reactor may
  // be deleted (OnDone) at any moment, so it is the last thing done here.
  if (actions.read != nullptr) StartRead(actions.read);
  if (actions.write != nullptr) StartWrite(actions.write);
  if (actions.finish) Finish(actions.finish_status);
}

}  // namespace infera
