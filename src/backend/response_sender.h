// ResponseSender: how a decoupled model answers one request — zero, one or many responses,
// then a final flag (Triton's TRITONBACKEND_ResponseFactory, as a C++ value;
// docs/request_path.md).
//
// A decoupled model's ModelInstance::ExecuteDecoupled gets one sender per request and
// may keep it after returning (move it to the thread that produces the responses):
//
//   sender.Send(outputs);                  a response; more follow
//   sender.Send(outputs, /*final=*/true);  the last response
//   sender.Finish();                       ends the request without a response (OK: Triton's
//                                          empty final response)
//   sender.Finish(status);                 fails the request (after any responses sent)
//
// Outputs are config outputs (names and datatypes the config declares, any subset, in any
// order), with the batch dimension when the model batches; the model version checks them
// as it checks Execute()'s and a response that breaks the config fails the request
// (Internal: the model's fault). Send returns that error too, so a backend can stop.
// IsStopped(): the client went away or the deadline passed — stop producing and Finish
// (the request is answered Cancelled / DeadlineExceeded whatever is sent after).
// A sender destroyed before its final response fails the request with Internal ("sent no
// final response"): a backend bug is an error, never a hang.
//
// Not thread-safe: move-only, used by one thread at a time (the sink behind it is
// thread-safe, so a sender may be moved between threads).
#ifndef INFERA_BACKEND_RESPONSE_SENDER_H_
#define INFERA_BACKEND_RESPONSE_SENDER_H_

#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "api/generation.h"
#include "api/tensor.h"

namespace infera {

// What a ResponseSender writes into; implemented by the model version (one per request).
// Thread-safe.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // One response; `final` ends the request. Returns why it was refused (outputs that
  // break the config: the request then fails), or OK.
  virtual absl::Status Send(std::vector<Tensor> outputs, bool final) = 0;
  // Ends the request: OK without a response, or failed with `status`.
  virtual void Finish(absl::Status status) = 0;
  // For a generation (an LLM's decoupled tensor requests): where its time went, reported
  // before its final response so that the trace can show prefill / decode spans.
  virtual void SetGenerationTimings(const GenerationTimings& timings) = 0;
  virtual bool IsStopped() const = 0;
};

class ResponseSender {
 public:
  explicit ResponseSender(std::shared_ptr<ResponseSink> sink) : sink_(std::move(sink)) {}
  ResponseSender(ResponseSender&& other) noexcept
      : sink_(std::move(other.sink_)), finished_(std::exchange(other.finished_, true)) {}
  ResponseSender& operator=(ResponseSender&& other) noexcept {
    if (this != &other) {
      FailUnfinished();
      sink_ = std::move(other.sink_);
      finished_ = std::exchange(other.finished_, true);
    }
    return *this;
  }
  ResponseSender(const ResponseSender&) = delete;
  ResponseSender& operator=(const ResponseSender&) = delete;
  ~ResponseSender() { FailUnfinished(); }

  // See the file comment. After the final response (or Finish) further calls are
  // FailedPrecondition / ignored.
  absl::Status Send(std::vector<Tensor> outputs, bool final = false) {
    if (finished_) return absl::FailedPreconditionError("the request already has its final response");
    absl::Status sent = sink_->Send(std::move(outputs), final);
    if (final || !sent.ok()) finished_ = true;
    return sent;
  }
  void Finish(absl::Status status = absl::OkStatus()) {
    if (finished_) return;
    finished_ = true;
    sink_->Finish(std::move(status));
  }
  void SetGenerationTimings(const GenerationTimings& timings) {
    if (!finished_) sink_->SetGenerationTimings(timings);
  }
  bool IsStopped() const { return finished_ || sink_->IsStopped(); }
  bool finished() const { return finished_; }

 private:
  void FailUnfinished() {
    if (!finished_ && sink_) {
      finished_ = true;
      sink_->Finish(absl::InternalError("the model sent no final response for this request"));
    }
  }

  std::shared_ptr<ResponseSink> sink_;
  bool finished_ = false;
};

}  // namespace infera

#endif  // INFERA_BACKEND_RESPONSE_SENDER_H_
