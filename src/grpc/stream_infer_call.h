// StreamInferCall: one ModelStreamInfer call (bidirectional stream) on the async
// completion-queue API — no thread of its own, no thread blocked per stream.
//
// Each request read from the stream goes through RunStreamInfer (the one inference
// pipeline shared with unary ModelInfer and HTTP, infer_call.h; the call's traceparent /
// x-routing-key metadata apply to every request, each traced as its own root span) and is
// answered by one ModelStreamInferResponse per response of its model: one for most
// models, any number for a decoupled model (Triton's repeat, an LLM), each with Triton's
// `triton_final_response` parameter (true on a request's last answer; a decoupled model's
// empty final response is written only when the request set
// `triton_enable_empty_final_response`). A failed request is answered by `error_message`
// with `infer_response` carrying just the request's model name, version and id. A bad
// request (a message that is not a ModelInferRequest included) never ends the stream.
//
//   client ──read tag──> OnReadDone (the queue's thread) ──RunStreamInfer──> [inline, a
//   worker, or a decoupled model's thread] ──Respond──> Write at once when no write is in
//   flight, else the write queue, started by the next write-done tag; the next read is
//   started after each request (while fewer than max_pending are unanswered)
//
// Reads and every tag run on the polling thread of the queue the stream was requested on
// (infer_cq_threads.h); answers are written by whichever thread produced them, with no
// hop to another thread.
//
// Ordering: requests on one stream run concurrently (several instances, batching), so
// answers of different requests may come back out of request order: clients match them by
// id (as Triton's do). The answers of one request are written in the order its model sent
// them.
// Flow control: at most `max_pending_per_stream` requests of a stream are read but not
// finished (their final answer not yet written); past that, reading pauses until writes
// drain, so a client that sends without reading cannot grow server memory without bound.
// A decoupled model's responses are not paced by the reader: when more than
// `max_queued_bytes_per_stream` of answers wait to be written, the stream is ended with
// RESOURCE_EXHAUSTED (and its requests cancelled), as an HTTP event stream is cut.
//
// How a stream ends:
//   - the client half-closes: every answer is written, then status OK;
//   - the call is cancelled (client gone, deadline, server shutdown timeout: the done
//     tag reports it): the stream's CancellationToken fires so queued requests are
//     dropped and decoupled ones stop, unwritten answers are discarded, status CANCELLED;
//   - the client reads too slowly (above): RESOURCE_EXHAUSTED, as a cancel otherwise;
//   - the server drains (StreamRegistry::DrainAll): no more reads, answers in flight are
//     written, then status UNAVAILABLE ("server is shutting down").
//
// Lifetime: created by Request(), deleted by whichever thread leaves it last once the
// finish and done tags are back, every request read has had its final answer (written or
// dropped), no read or write is outstanding and no thread is inside (state under `mu_`;
// gRPC operations are started outside it).
#ifndef INFERA_GRPC_STREAM_INFER_CALL_H_
#define INFERA_GRPC_STREAM_INFER_CALL_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/cancellation.h"
#include "grpc/async_infer_context.h"
#include "grpc/cq_tag.h"
#include "grpc/infer_call.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/async_stream.h"
#include "grpcpp/support/byte_buffer.h"

namespace infera {

class StreamInferCall {
 public:
  // Creates a call object and requests the next ModelStreamInfer call on `cq`. `context`
  // and `cq` outlive it.
  static void Request(const AsyncInferContext& context, grpc::ServerCompletionQueue* cq);

  // For StreamRegistry::DrainAll: marks the stream draining; true when it is idle and
  // the caller must call FinishDrained() (outside any lock the stream's deletion takes).
  bool BeginDrain();
  void FinishDrained();

 private:
  // One serialised answer; `final` ends its request.
  struct Answer {
    grpc::ByteBuffer message;
    bool final = true;
    size_t bytes = 0;
  };
  // gRPC operations decided under `mu_`, started after it is released.
  struct Actions {
    bool read = false;
    std::optional<Answer> write;
    bool finish = false;
    grpc::Status finish_status;
  };

  StreamInferCall(const AsyncInferContext& context, grpc::ServerCompletionQueue* cq)
      : context_(context), cq_(cq) {}
  ~StreamInferCall() = default;

  void OnMatched(bool ok);
  void OnReadDone(bool ok);
  void OnWriteDone(bool ok);
  void OnFinished(bool ok);
  void OnDone(bool ok);

  void Process(std::shared_ptr<inference::ModelInferRequest> message);
  // Queues (or drops, once the stream is broken) one answer of a request.
  void Respond(StreamAnswer answer);
  // Starts `actions`, then leaves the object (maybe deleting it).
  void RunAndLeave(Actions& actions);
  void Leave();
  void MaybeReadLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeWriteLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFinishLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the stream early with `status` (CANCELLED unless told otherwise).
  void BreakLocked(absl::Status status = absl::CancelledError("stream cancelled")) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const AsyncInferContext& context_;
  grpc::ServerCompletionQueue* const cq_;
  grpc::ServerContext server_context_;
  grpc::ServerAsyncReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer> stream_{&server_context_};
  const std::shared_ptr<CancellationToken> cancellation_ = std::make_shared<CancellationToken>();
  InferCallMetadata metadata_;     // set when matched, before any request runs
  grpc::ByteBuffer read_buffer_;   // the read in flight fills it

  absl::Mutex mu_;
  int active_ ABSL_GUARDED_BY(mu_) = 0;          // threads inside the object
  bool read_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool processing_ ABSL_GUARDED_BY(mu_) = false;  // inside OnReadDone with a request
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;  // the client half-closed
  std::deque<Answer> write_queue_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // of write_queue_ and the write in flight
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_final_ ABSL_GUARDED_BY(mu_) = false;  // the write in flight ends its request
  size_t writing_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t pending_ ABSL_GUARDED_BY(mu_) = 0;       // requests read, final answer not yet written
  bool broken_ ABSL_GUARDED_BY(mu_) = false;      // cancelled, or a write failed
  absl::Status broken_status_ ABSL_GUARDED_BY(mu_);  // why, once broken
  bool draining_ ABSL_GUARDED_BY(mu_) = false;    // server shutting down
  bool finished_ ABSL_GUARDED_BY(mu_) = false;    // Finish decided
  bool finish_back_ ABSL_GUARDED_BY(mu_) = false; // its tag returned
  bool done_back_ ABSL_GUARDED_BY(mu_) = false;   // the done tag returned
  grpc::Status finish_status_ ABSL_GUARDED_BY(mu_);  // what Finish sends, once decided

  MemberTag<StreamInferCall> matched_tag_{this, &StreamInferCall::OnMatched};
  MemberTag<StreamInferCall> read_tag_{this, &StreamInferCall::OnReadDone};
  MemberTag<StreamInferCall> write_tag_{this, &StreamInferCall::OnWriteDone};
  MemberTag<StreamInferCall> finish_tag_{this, &StreamInferCall::OnFinished};
  MemberTag<StreamInferCall> done_tag_{this, &StreamInferCall::OnDone};
};

}  // namespace infera

#endif  // INFERA_GRPC_STREAM_INFER_CALL_H_
