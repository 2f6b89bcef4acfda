#include "grpc/stream_registry.h"

#include <vector>

#include "grpc/stream_infer_call.h"

namespace infera {

bool StreamRegistry::Add(StreamInferCall* stream) {
  absl::MutexLock lock(&mu_);
  streams_.insert(stream);
  return draining_;
}

void StreamRegistry::Remove(StreamInferCall* stream) {
  absl::MutexLock lock(&mu_);
  streams_.erase(stream);
}

void StreamRegistry::DrainAll() {
  // A stream cannot be deleted before Finish is called on it, and only the caller of
  // BeginDrain() that got `true` calls it (FinishDrained), so the streams to finish stay
  // valid after the lock is released. FinishDrained runs outside the lock: the stream
  // may delete itself there (which calls Remove).
  std::vector<StreamInferCall*> idle;
  {
    absl::MutexLock lock(&mu_);
    draining_ = true;
    for (StreamInferCall* stream : streams_) {
      if (stream->BeginDrain()) idle.push_back(stream);
    }
  }
  for (StreamInferCall* stream : idle) stream->FinishDrained();
}

}  // namespace infera
