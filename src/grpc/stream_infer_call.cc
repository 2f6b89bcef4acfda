#include "grpc/stream_infer_call.h"

#include <string>
#include <utility>

#include "common/str_cat.h"
#include "grpc/arena_infer_request.h"
#include "grpc/grpc_status.h"
#include "grpc/stream_registry.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace infera {
namespace {

// The in-band answer to a request that failed: `error_message`, and `infer_response`
// with only the request's model name, version and id.
grpc::ByteBuffer ErrorAnswer(const inference::ModelInferRequest& request, const absl::Status& status) {
  inference::ModelStreamInferResponse answer;
  answer.set_error_message(std::string(status.message().data(), status.message().size()));
  inference::ModelInferResponse* response = answer.mutable_infer_response();
  response->set_model_name(request.model_name());
  response->set_model_version(request.model_version());
  response->set_id(request.id());
  grpc::ByteBuffer buffer;
  bool own = false;
  // Serialising a message this small cannot fail short of running out of memory.
  (void)grpc::SerializationTraits<inference::ModelStreamInferResponse>::Serialize(answer, &buffer, &own);
  return buffer;
}

}  // namespace

void StreamInferCall::Request(const AsyncInferContext& context, grpc::ServerCompletionQueue* cq) {
  auto* call = new StreamInferCall(context, cq);
  call->server_context_.AsyncNotifyWhenDone(&call->done_tag_);
  context.service->RequestModelStreamInfer(&call->server_context_, &call->stream_, cq, cq, &call->matched_tag_);
}

void StreamInferCall::OnMatched(bool ok) {
  if (!ok) {  // the server is shutting down: no call, no done tag
    delete this;
    return;
  }
  context_.live_calls->Add();
  Request(context_, cq_);
  metadata_ = InferCallMetadata::From(server_context_.client_metadata());
  const bool draining = context_.streams != nullptr && context_.streams->Add(this);
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    ++active_;
    draining_ = draining;
    MaybeReadLocked(actions);
    MaybeFinishLocked(actions);
  }
  RunAndLeave(actions);
}

void StreamInferCall::OnReadDone(bool ok) {
  Actions actions;
  bool take = false;
  {
    absl::MutexLock lock(&mu_);
    ++active_;
    read_in_flight_ = false;
    if (!ok || finished_) {  // the client half-closed, or the stream already ended
      reads_done_ = reads_done_ || !ok;
      MaybeFinishLocked(actions);
    } else {
      processing_ = true;  // keeps the stream from finishing under our feet
      ++pending_;
      take = true;
    }
  }
  if (take) {
    auto message = MakeArenaModelInferRequest();
    grpc::Status parsed =
        grpc::SerializationTraits<inference::ModelInferRequest>::Deserialize(&read_buffer_, message.get());
    if (parsed.ok()) {
      Process(std::move(message));
    } else {
      Respond(Answer{ErrorAnswer(inference::ModelInferRequest(),
                                 absl::InvalidArgumentError(StrCat("the message is not a ModelInferRequest (",
                                                                   parsed.error_message(), ")")))});
    }
    absl::MutexLock lock(&mu_);
    processing_ = false;
    MaybeReadLocked(actions);
    MaybeFinishLocked(actions);
  }
  RunAndLeave(actions);
}

void StreamInferCall::Process(std::shared_ptr<inference::ModelInferRequest> message) {
  const inference::ModelInferRequest& request = *message;
  RunModelInfer(*context_.manager, request, message, cancellation_, context_.infer, metadata_,
                ResponseFraming::kStream, [this, message](InferCallResult result) mutable {
                  Answer answer;
                  if (result.status.ok()) {
                    answer.message = std::move(result.message);
                  } else {
                    answer.message = ErrorAnswer(*message, result.status);
                  }
                  message.reset();
                  Respond(std::move(answer));
                });
}

void StreamInferCall::Respond(Answer answer) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    ++active_;
    if (broken_) {
      --pending_;  // nobody to send it to
    } else {
      write_queue_.push_back(std::move(answer));
      MaybeWriteLocked(actions);
    }
    MaybeFinishLocked(actions);
  }
  RunAndLeave(actions);
}

void StreamInferCall::OnWriteDone(bool ok) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    ++active_;
    writing_ = false;
    --pending_;
    if (!ok) BreakLocked();  // the client is gone
    MaybeWriteLocked(actions);
    MaybeReadLocked(actions);
    MaybeFinishLocked(actions);
  }
  RunAndLeave(actions);
}

void StreamInferCall::OnFinished(bool) {
  {
    absl::MutexLock lock(&mu_);
    ++active_;
    finish_back_ = true;
  }
  Leave();
}

void StreamInferCall::OnDone(bool) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    ++active_;
    done_back_ = true;
    if (server_context_.IsCancelled()) BreakLocked();
    MaybeFinishLocked(actions);
  }
  RunAndLeave(actions);
}

bool StreamInferCall::BeginDrain() {
  Actions actions;
  absl::MutexLock lock(&mu_);
  draining_ = true;
  MaybeFinishLocked(actions);
  if (actions.finish) ++active_;  // the drainer is inside until FinishDrained returns
  return actions.finish;
}

void StreamInferCall::FinishDrained() {
  grpc::Status status;
  {
    absl::MutexLock lock(&mu_);
    status = finish_status_;
  }
  stream_.Finish(status, &finish_tag_);
  Leave();
}

void StreamInferCall::BreakLocked() {
  cancellation_->Cancel();
  if (broken_) return;
  broken_ = true;
  pending_ -= write_queue_.size();  // answers still queued go nowhere
  write_queue_.clear();
}

void StreamInferCall::MaybeReadLocked(Actions& actions) {
  if (read_in_flight_ || processing_ || reads_done_ || broken_ || draining_ || finished_ ||
      pending_ >= context_.max_pending_per_stream) {
    return;
  }
  read_in_flight_ = true;
  actions.read = true;
}

void StreamInferCall::MaybeWriteLocked(Actions& actions) {
  if (writing_ || write_queue_.empty() || broken_) return;
  writing_ = true;
  actions.write = std::move(write_queue_.front());
  write_queue_.pop_front();
}

void StreamInferCall::MaybeFinishLocked(Actions& actions) {
  if (finished_ || processing_ || writing_ || pending_ > 0) return;
  // Normally the outstanding read must come back first (it does once the client
  // half-closes or the call is cancelled). A draining stream finishes without it: the
  // read then completes (not ok) after Finish and is ignored.
  if (!draining_ && (read_in_flight_ || (!reads_done_ && !broken_))) return;
  finished_ = true;
  actions.finish = true;
  if (broken_) {
    finish_status_ = ToGrpcStatus(absl::CancelledError("stream cancelled"));
  } else if (!reads_done_) {
    finish_status_ = ToGrpcStatus(absl::UnavailableError("server is shutting down"));
  } else {
    finish_status_ = grpc::Status::OK;
  }
  actions.finish_status = finish_status_;
}

void StreamInferCall::RunAndLeave(Actions& actions) {
  if (actions.read) stream_.Read(&read_buffer_, &read_tag_);
  if (actions.write) stream_.Write(actions.write->message, &write_tag_);
  if (actions.finish) stream_.Finish(actions.finish_status, &finish_tag_);
  Leave();
}

void StreamInferCall::Leave() {
  bool last = false;
  {
    absl::MutexLock lock(&mu_);
    --active_;
    last = active_ == 0 && finish_back_ && done_back_ && !read_in_flight_ && !writing_;
  }
  if (!last) return;
  if (context_.streams != nullptr) context_.streams->Remove(this);
  LiveCalls* live = context_.live_calls;
  delete this;
  live->Remove();  // last: shutdown may stop the queues once every call is gone
}

}  // namespace infera
