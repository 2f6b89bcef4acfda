// StreamRegistry: the ModelStreamInfer streams that are open, so that a server shutdown
// can end idle streams at once instead of waiting out the exit timeout for clients that
// keep a stream open between requests (the gRPC analogue of closing idle keep-alive
// connections).
//
// DrainAll() marks every open stream, and every stream opened after it, as draining:
// the stream reads no more requests, answers the ones it has, then finishes with
// UNAVAILABLE ("server is shutting down"), the retryable code. A stream with nothing in
// flight finishes right away.
//
// Thread-safe. Streams add themselves when their call arrives and remove themselves just
// before they are deleted.
#ifndef INFERA_GRPC_STREAM_REGISTRY_H_
#define INFERA_GRPC_STREAM_REGISTRY_H_

#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace infera {

class StreamInferCall;

class StreamRegistry {
 public:
  // Returns whether the registry is already draining (the stream must drain too).
  bool Add(StreamInferCall* stream);
  void Remove(StreamInferCall* stream);
  void DrainAll();

 private:
  absl::Mutex mu_;
  std::set<StreamInferCall*> streams_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace infera

#endif  // INFERA_GRPC_STREAM_REGISTRY_H_
