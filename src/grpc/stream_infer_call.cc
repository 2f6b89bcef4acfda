#include "grpc/stream_infer_call.h"

#include <string>
#include <utility>

#include "common/str_cat.h"
#include "grpc/admin_audit.h"
#include "grpc/api_key_check.h"
#include "security/api_key_meter.h"
#include "grpc/arena_infer_request.h"
#include "grpc/grpc_status.h"
#include "grpc/stream_registry.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace infera {

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
    // A restricted `inference` category without its header ends the stream at once, as
    // Triton's (api/admin_guard.h).
    if (context_.guard != nullptr) {
      absl::Status restricted =
          context_.guard->CheckRestricted(ApiCategory::kInference, MetadataLookup(server_context_));
      if (!restricted.ok()) BreakLocked(std::move(restricted));
    }
    // A stream without a valid key ends at once, UNAUTHENTICATED (grpc/api_key_check.h).
    if (context_.api_keys != nullptr) {
      absl::Status key = context_.api_keys->CheckRight(GrpcAuthorization(server_context_), kRightInfer);
      if (!key.ok()) BreakLocked(std::move(key));
    }
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
      Respond(StreamAnswer{StreamErrorAnswer(inference::ModelInferRequest(),
                                             absl::InvalidArgumentError(StrCat("the message is not a ModelInferRequest (",
                                                                               parsed.error_message(), ")"))),
                           true});
    }
    absl::MutexLock lock(&mu_);
    processing_ = false;
    MaybeReadLocked(actions);
    MaybeFinishLocked(actions);
  }
  RunAndLeave(actions);
}

void StreamInferCall::Process(std::shared_ptr<inference::ModelInferRequest> message) {
  // Each message is a request: its model and the key's request quota are checked.
  absl::StatusOr<ApiKeyGrantPtr> key = AuthorizeGrpcCall(context_.api_keys, server_context_, *message);
  if (!key.ok()) return Respond(StreamAnswer{StreamErrorAnswer(*message, key.status()), true});
  // This message's tokens are charged to the key that admitted it.
  const InferCallMetadata* metadata = &metadata_;
  InferCallMetadata metered;
  if (*key != nullptr) {
    metered = metadata_;
    metered.token_meter = ApiKeyTokenMeter(*std::move(key));
    metadata = &metered;
  }
  RunStreamInfer(*context_.manager, context_.infer, *metadata, std::move(message), cancellation_,
                 [this](StreamAnswer answer) { Respond(std::move(answer)); });
}

void StreamInferCall::Respond(StreamAnswer answer) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    ++active_;
    if (broken_ || !answer.message) {
      // Nobody to send it to, or nothing to send (an empty final response the client did
      // not ask for): a final answer still ends its request.
      if (answer.final) --pending_;
    } else {
      const size_t bytes = answer.message->Length();
      queued_bytes_ += bytes;
      write_queue_.push_back(Answer{*std::move(answer.message), answer.final, bytes});
      if (!answer.final && queued_bytes_ > context_.max_queued_bytes_per_stream) {
        BreakLocked(absl::ResourceExhaustedError(
            StrCat("the client reads this stream too slowly: more than ", context_.max_queued_bytes_per_stream,
                   " bytes of answers are waiting to be written")));
      }
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
    queued_bytes_ -= writing_bytes_;
    if (writing_final_) --pending_;
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

void StreamInferCall::BreakLocked(absl::Status status) {
  cancellation_->Cancel();
  if (broken_) return;
  broken_ = true;
  broken_status_ = std::move(status);
  // Answers still queued go nowhere; the requests they would have ended are over.
  for (const Answer& answer : write_queue_) {
    if (answer.final) --pending_;
    queued_bytes_ -= answer.bytes;
  }
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
  writing_final_ = write_queue_.front().final;
  writing_bytes_ = write_queue_.front().bytes;
  actions.write = std::move(write_queue_.front());
  write_queue_.pop_front();
}

void StreamInferCall::MaybeFinishLocked(Actions& actions) {
  if (finished_ || processing_ || writing_ || pending_ > 0) return;
  // Normally the outstanding read must come back first (it does once the client
  // half-closes or the call is cancelled). A draining stream, and one the server ended
  // (a client that reads too slowly, still connected), finish without it: the read then
  // completes (not ok) after Finish and is ignored.
  if (!draining_ && !broken_ && (read_in_flight_ || !reads_done_)) return;
  finished_ = true;
  actions.finish = true;
  if (broken_) {
    finish_status_ = ToGrpcStatus(broken_status_);
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
