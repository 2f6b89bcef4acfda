// GrpcStreamInferClient: the KServe v2 gRPC InferClient over ModelStreamInfer
// (`infera bench -i grpc --streaming`, perf_analyzer's --streaming), on gRPC's
// callback API.
//
// Closed loop per slot: every slot of max_in_flight owns one bidirectional stream
// (opened lazily, all on one channel) with at most one request on it; the next request
// goes out when the driver sends again after the previous answer. Requests are built
// once per payload (raw_input_contents). Each answer arrives on a gRPC thread and is
// posted to the shard's io_context, so `done` runs on the driver's thread as
// InferClient requires.
//
// Errors, counted by kind:
//   "grpc stream error"      the answer carried error_message (the stream goes on);
//   "grpc stream ended"      the stream finished while the request was outstanding
//                            (detail: status code and message); the slot's next send
//                            opens a fresh stream;
//   "grpc DEADLINE_EXCEEDED" no answer within request_timeout_ns (the stream is
//                            cancelled);
//   "check" / "invalid response" with `check`, as the unary client.
//
// Close() cancels every stream (outstanding requests fail as "grpc stream ended");
// later sends open new ones. Destruction cancels what is left and waits until gRPC has
// finished every stream; the owner stops the io_context first (load_shard.h), so
// posted completions are destroyed, never run.
//
// Not thread-safe: Send/Close on the io_context's thread only.
#ifndef INFERA_TOOLS_BENCH_GRPC_STREAM_CLIENT_H_
#define INFERA_TOOLS_BENCH_GRPC_STREAM_CLIENT_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/bench_clock.h"
#include "tools/bench/grpc_client.h"
#include "tools/bench/infer_client.h"
#include "tools/bench/input_data.h"

namespace boost::asio {
class io_context;
}

namespace infera::bench {

class GrpcStreamInferClient final : public InferClient {
 public:
  // `payloads`: inputs, and expected outputs when checking. `options` as for unary.
  static absl::StatusOr<std::unique_ptr<GrpcStreamInferClient>> Create(boost::asio::io_context& io,
                                                                       const Clock& clock,
                                                                       GrpcClientOptions options,
                                                                       const std::vector<PayloadData>& payloads);
  ~GrpcStreamInferClient() override;

  void Send(size_t payload_index, Done done) override;
  int max_in_flight() const override;
  size_t num_payloads() const override;
  void Close() override;

  class Impl;

 private:
  explicit GrpcStreamInferClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_GRPC_STREAM_CLIENT_H_
