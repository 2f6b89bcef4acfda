// StreamInferReactor: one ModelStreamInfer call (bidirectional stream), on the gRPC
// callback API — no thread of its own, no thread blocked per stream.
//
// Each request read from the stream goes through RunModelInfer (the core path shared
// with unary ModelInfer and HTTP; the call's traceparent / x-routing-key metadata apply
// to every request, each traced as its own root span) and is answered by one
// ModelStreamInferResponse:
// the response, or `error_message` naming the problem with `infer_response` carrying
// just the request's model name, version and id. A bad request never ends the stream.
//
//   client ──read──> OnReadDone ──RunModelInfer──> [model worker] ──Respond──> write queue
//                      └─ next read (while fewer than max_pending are unanswered)
//
// Requests on one stream run concurrently (several instances, batching), so responses
// may come back out of request order: clients match them by id (as Triton's do).
// Flow control: at most `max_pending` requests of a stream are read but not yet written
// back; past that, reading pauses until writes drain, so a client that sends without
// reading cannot grow server memory without bound.
//
// How a stream ends:
//   - the client half-closes: every answer is written, then status OK;
//   - the call is cancelled (client gone, deadline, server shutdown timeout): the
//     stream's CancellationToken fires so queued requests can be dropped, unwritten
//     answers are discarded, status CANCELLED;
//   - the server drains (StreamRegistry::DrainAll): no more reads, answers in flight are
//     written, then status UNAVAILABLE ("server is shutting down").
//
// Lifetime: created by the service per call, deletes itself in OnDone, which gRPC calls
// only after Finish — and Finish is only called once no write, model callback or
// OnReadDone is in progress, so nothing can touch the reactor after it is gone.
//
// Thread-safe: gRPC reactions and model callbacks arrive on arbitrary threads; state is
// under `mu_`, and gRPC operations are started outside it (gRPC may run a reaction inline).
#ifndef INFERA_GRPC_STREAM_INFER_REACTOR_H_
#define INFERA_GRPC_STREAM_INFER_REACTOR_H_

#include <cstddef>
#include <deque>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/cancellation.h"
#include "grpc/infer_call.h"
#include "grpc/stream_registry.h"
#include "grpc_service.grpc.pb.h"
#include "manager/model_manager.h"

namespace infera {

class StreamInferReactor final
    : public grpc::ServerBidiReactor<inference::ModelInferRequest,
                                     inference::ModelStreamInferResponse> {
 public:
  struct Options {
    InferCallOptions infer;
    size_t max_pending = 256;  // read but not yet answered, per stream
  };

  // Registers with `registry` (may be null; it must outlive the reactor) and starts
  // reading at once. `metadata`: what the call's client metadata says (infer_call.h).
  StreamInferReactor(const ModelManager& manager, Options options, StreamRegistry* registry,
                     InferCallMetadata metadata = {});

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

  // For StreamRegistry::DrainAll: marks the stream draining; true when it is idle and
  // the caller must call FinishDrained() (outside any lock OnDone could need).
  bool BeginDrain();
  void FinishDrained();

 private:
  using Response = inference::ModelStreamInferResponse;

  // gRPC operations decided under `mu_`, started after it is released.
  struct Actions {
    inference::ModelInferRequest* read = nullptr;
    const Response* write = nullptr;
    bool finish = false;
    grpc::Status finish_status;
  };

  ~StreamInferReactor() override = default;

  void Process(std::shared_ptr<inference::ModelInferRequest> message);
  // Queues (or drops, once the stream is broken) the answer to one request.
  void Respond(std::unique_ptr<Response> response);
  void Run(const Actions& actions);
  void MaybeReadLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeWriteLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFinishLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void BreakLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ModelManager& manager_;
  const Options options_;
  StreamRegistry* const registry_;
  const InferCallMetadata metadata_;
  const std::shared_ptr<CancellationToken> cancellation_ = std::make_shared<CancellationToken>();

  absl::Mutex mu_;
  std::shared_ptr<inference::ModelInferRequest> reading_ ABSL_GUARDED_BY(mu_);
  bool read_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool processing_ ABSL_GUARDED_BY(mu_) = false;  // inside OnReadDone with a request
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;  // the client half-closed
  std::deque<std::unique_ptr<Response>> write_queue_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Response> writing_ ABSL_GUARDED_BY(mu_);
  size_t pending_ ABSL_GUARDED_BY(mu_) = 0;  // requests read, answer not yet written
  bool broken_ ABSL_GUARDED_BY(mu_) = false;    // cancelled, or a write failed
  bool draining_ ABSL_GUARDED_BY(mu_) = false;  // server shutting down
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace infera

#endif  // INFERA_GRPC_STREAM_INFER_REACTOR_H_
