#include "grpc/stream_registry.h"

#include <vector>

#include "grpc/stream_infer_reactor.h"

namespace infera {

bool StreamRegistry::Add(StreamInferReactor* stream) {
  absl::MutexLock lock(&mu_);
  streams_.insert(stream);
  return draining_;
}

void StreamRegistry::Remove(StreamInferReactor* stream) {
  absl::MutexLock lock(&mu_);
  streams_.erase(stream);
}

void StreamRegistry::DrainAll() {
  // A stream cannot be deleted before Finish is called on it, and only the caller of
  // BeginDrain() that got `true` calls it, so the streams to finish stay valid after the
  // lock is released. Finish runs outside the lock: gRPC may run OnDone (which calls
  // Remove) inline.
  std::vector<StreamInferReactor*> idle;
  {
    absl::MutexLock lock(&mu_);
    draining_ = true;
    for (StreamInferReactor* stream : streams_) {
      if (stream->BeginDrain()) idle.push_back(stream);
    }
  }
  for (StreamInferReactor* stream : idle) stream->FinishDrained();
}

}  // namespace infera
