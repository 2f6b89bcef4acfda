#include "tools/bench/grpc_stream_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <thread>

#include "common/str_cat.h"
#include "grpc_service.grpc.pb.h"
#include "tools/bench/grpc_messages.h"
#include "tools/bench/response_checker.h"

namespace infera::bench {

namespace asio = boost::asio;
using inference::GRPCInferenceService;
using inference::ModelInferRequest;
using inference::ModelStreamInferResponse;

class GrpcStreamInferClient::Impl {
 public:
  Impl(asio::io_context& io, const Clock& clock, GrpcClientOptions options, std::vector<ModelInferRequest> requests,
       std::vector<std::vector<Tensor>> expected)
      : io_(io), clock_(clock), options_(std::move(options)), requests_(std::move(requests)),
        expected_(std::move(expected)), channel_(MakeBenchChannel(options_.target)),
        stub_(GRPCInferenceService::NewStub(channel_)), timer_(io) {
    timer_period_ns_ = std::clamp<int64_t>(options_.request_timeout_ns / 10, kNsPerMs, 100 * kNsPerMs);
  }

  ~Impl() {
    // The io_context is stopped: nothing below races with its handlers. Cancel every
    // stream and let go of its hold, then wait for gRPC to finish each (OnDone has
    // returned); only then may the reactors (their contexts) be destroyed.
    for (auto& stream : streams_) stream->Cancel();
    for (auto& stream : retired_) stream->Cancel();
    while (alive_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  void Send(size_t payload, Done done) {
    Stream* stream = nullptr;
    bool fresh = false;
    if (!idle_.empty()) {
      stream = idle_.back();
      idle_.pop_back();
    } else {
      streams_.push_back(std::make_unique<Stream>(this));
      stream = streams_.back().get();
      fresh = true;
    }
    stream->busy = true;
    stream->payload = payload;
    stream->done = std::move(done);
    stream->sent_ns = clock_.NowNs();
    stream->pending_ops.store(2);  // the write and the read
    stream->StartWrite(&requests_[payload]);
    stream->StartRead(&stream->response);
    if (fresh) stream->StartCall();
    ArmTimer();
  }

  int max_in_flight() const { return options_.max_in_flight; }
  size_t num_payloads() const { return requests_.size(); }

  void Close() {
    idle_.clear();
    std::vector<Stream*> failing;
    for (auto& stream : streams_) {
      stream->dead = true;
      stream->Cancel();
      if (stream->busy) failing.push_back(stream.get());
    }
    std::move(streams_.begin(), streams_.end(), std::back_inserter(retired_));
    streams_.clear();
    // Outstanding requests fail now (the driver reads its totals right after Close);
    // the streams' late answers and OnDone find them no longer busy.
    for (Stream* stream : failing) {
      stream->busy = false;
      std::move(stream->done)(ErrorResult("grpc stream ended", "CANCELLED: client closed", stream->sent_ns));
    }
  }

 private:
  // One ModelStreamInfer stream. Fields without a comment are the io thread's.
  class Stream final : public grpc::ClientBidiReactor<ModelInferRequest, ModelStreamInferResponse> {
   public:
    explicit Stream(Impl* impl) : impl_(impl) {
      impl_->alive_.fetch_add(1);
      impl_->stub_->async()->ModelStreamInfer(&context, this);
      // Sends start from the io thread, outside reactions: the hold keeps the call
      // from finishing between an answer and the next send.
      AddHold();
    }

    // Cancels the call and lets go of the hold (any thread; idempotent).
    void Cancel() {
      context.TryCancel();
      ReleaseHold();
    }

    // A request is answered once its read and its write have both completed (the
    // server may answer before gRPC reports the write done, and a stream takes one
    // write at a time).
    void OnWriteDone(bool ok) override {
      if (!ok) {
        broken.store(true);
        ReleaseHold();  // the stream is over
      }
      OpDone();
    }

    void OnReadDone(bool ok) override {
      if (ok) {
        OpDone();
      } else {
        ReleaseHold();  // the stream is over; OnDone reports the request with the status
      }
    }

    void OnDone(const grpc::Status& status) override {
      Impl* impl = impl_;
      asio::post(impl->io_, [impl, this, status] { impl->Ended(this, status); });
      returned.store(true);  // after this, the io thread may destroy the stream
      impl->alive_.fetch_sub(1);
    }

    grpc::ClientContext context;
    ModelStreamInferResponse response;  // gRPC writes it until the read completes
    bool busy = false;                  // a request is outstanding
    bool dead = false;                  // ended or cancelled: never sent on again
    bool timed_out = false;
    size_t payload = 0;
    int64_t sent_ns = 0;
    InferClient::Done done;
    std::atomic<bool> returned{false};  // OnDone has run (any thread)
    std::atomic<int> pending_ops{0};    // of the outstanding request (any thread)
    std::atomic<bool> broken{false};    // a write failed: never sent on again (any thread)

   private:
    void OpDone() {
      if (pending_ops.fetch_sub(1) == 1) asio::post(impl_->io_, [impl = impl_, this] { impl->Answered(this); });
    }

    void ReleaseHold() {
      if (!hold_released_.exchange(true)) RemoveHold();
    }

    Impl* const impl_;
    std::atomic<bool> hold_released_{false};  // any thread
  };

  void Answered(Stream* stream) {
    if (!stream->busy) return;
    stream->busy = false;
    const ModelStreamInferResponse& answer = stream->response;
    RequestResult result;
    result.sent_ns = stream->sent_ns;
    if (!answer.error_message().empty()) {
      result = ErrorResult("grpc stream error", answer.error_message(), stream->sent_ns);
    } else if (options_.check && !expected_[stream->payload].empty()) {
      auto outputs = DecodeModelInferOutputs(answer.infer_response());
      absl::Status checked = outputs.ok() ? CompareOutputs(expected_[stream->payload], *outputs) : outputs.status();
      if (checked.ok()) {
        result.ok = true;
      } else {
        result = ErrorResult(outputs.ok() ? "check" : "invalid response", std::string(checked.message()),
                             stream->sent_ns);
      }
    } else {
      result.ok = true;
    }
    if (stream->broken.load()) stream->dead = true;
    if (!stream->dead) idle_.push_back(stream);
    std::move(stream->done)(std::move(result));
  }

  void Ended(Stream* stream, const grpc::Status& status) {
    stream->dead = true;
    idle_.erase(std::remove(idle_.begin(), idle_.end(), stream), idle_.end());
    auto it = std::find_if(streams_.begin(), streams_.end(), [stream](const auto& s) { return s.get() == stream; });
    if (it != streams_.end()) {
      retired_.push_back(std::move(*it));
      streams_.erase(it);
    }
    if (stream->busy) {
      stream->busy = false;
      RequestResult result =
          stream->timed_out
              ? ErrorResult("grpc DEADLINE_EXCEEDED",
                            StrCat("no answer on the stream within ", options_.request_timeout_ns / kNsPerMs, " ms"),
                            stream->sent_ns)
              : ErrorResult("grpc stream ended",
                            StrCat(GrpcCodeName(status.error_code()), ": ",
                                   status.error_message().empty() ? "the stream finished" : status.error_message()),
                            stream->sent_ns);
      std::move(stream->done)(std::move(result));
    }
    // Streams whose OnDone has returned are gRPC-free: free them.
    retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                  [](const auto& s) { return s->returned.load(); }),
                   retired_.end());
  }

  // The request timeout: one periodic check while requests are outstanding.
  void ArmTimer() {
    if (timer_armed_) return;
    timer_armed_ = true;
    timer_.expires_after(std::chrono::nanoseconds(timer_period_ns_));
    timer_.async_wait([this](const boost::system::error_code& ec) {
      timer_armed_ = false;
      if (ec) return;
      const int64_t now = clock_.NowNs();
      bool busy = false;
      for (auto& stream : streams_) {
        if (!stream->busy || stream->timed_out) continue;
        busy = true;
        if (now - stream->sent_ns >= options_.request_timeout_ns) {
          stream->timed_out = true;
          stream->dead = true;
          stream->Cancel();
        }
      }
      if (busy) ArmTimer();
    });
  }

  asio::io_context& io_;
  const Clock& clock_;
  const GrpcClientOptions options_;
  const std::vector<ModelInferRequest> requests_;
  const std::vector<std::vector<Tensor>> expected_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<GRPCInferenceService::Stub> stub_;
  std::atomic<int> alive_{0};                     // streams whose OnDone has not returned (any thread)
  std::vector<std::unique_ptr<Stream>> streams_;  // open (io thread)
  std::vector<Stream*> idle_;                     // open, nothing outstanding (io thread)
  std::vector<std::unique_ptr<Stream>> retired_;  // ended or cancelled, OnDone maybe still running
  asio::steady_timer timer_;
  bool timer_armed_ = false;
  int64_t timer_period_ns_ = 0;
};

absl::StatusOr<std::unique_ptr<GrpcStreamInferClient>> GrpcStreamInferClient::Create(
    asio::io_context& io, const Clock& clock, GrpcClientOptions options, const std::vector<PayloadData>& payloads) {
  if (payloads.empty()) return absl::InvalidArgumentError("no payloads");
  std::vector<ModelInferRequest> requests;
  std::vector<std::vector<Tensor>> expected;
  for (const PayloadData& p : payloads) {
    requests.push_back(BuildModelInferRequest(options.model, options.model_version, p));
    expected.push_back(options.check ? p.expected_outputs : std::vector<Tensor>{});
  }
  return std::unique_ptr<GrpcStreamInferClient>(new GrpcStreamInferClient(
      std::make_unique<Impl>(io, clock, std::move(options), std::move(requests), std::move(expected))));
}

GrpcStreamInferClient::GrpcStreamInferClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcStreamInferClient::~GrpcStreamInferClient() = default;
void GrpcStreamInferClient::Send(size_t payload_index, Done done) { impl_->Send(payload_index, std::move(done)); }
int GrpcStreamInferClient::max_in_flight() const { return impl_->max_in_flight(); }
size_t GrpcStreamInferClient::num_payloads() const { return impl_->num_payloads(); }
void GrpcStreamInferClient::Close() { impl_->Close(); }

}  // namespace infera::bench
