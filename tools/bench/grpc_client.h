// GrpcInferClient: the KServe v2 gRPC InferClient (inference.GRPCInferenceService,
// proto/grpc_service.proto) on gRPC's callback API, plus the control-plane calls a run
// needs over gRPC (model metadata and config, statistics).
//
// One channel (HTTP/2 multiplexes the calls; perf_analyzer's default too), up to
// max_in_flight ModelInfer calls outstanding. Requests are built once per payload
// (raw_input_contents: binary tensors, as gRPC clients send them). Each completion
// arrives on a gRPC thread and is posted to the shard's io_context, so `done` runs on
// the driver's thread as InferClient requires. Errors: the gRPC status code name
// ("grpc RESOURCE_EXHAUSTED", "grpc DEADLINE_EXCEEDED" for --request-timeout), and
// with `check` the outputs (raw_output_contents) are compared ("check").
//
// Not thread-safe: Send/Close on the io_context's thread only.
#ifndef INFERA_TOOLS_BENCH_GRPC_CLIENT_H_
#define INFERA_TOOLS_BENCH_GRPC_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/bench_clock.h"
#include "tools/bench/grpc_messages.h"
#include "tools/bench/infer_client.h"
#include "tools/bench/input_data.h"
#include "tools/bench/model_metadata.h"
#include "tools/bench/server_stats.h"

namespace boost::asio {
class io_context;
}

namespace infera::bench {

struct GrpcClientOptions {
  GrpcTarget target{"127.0.0.1:8001", nullptr};
  std::string model;
  std::string model_version;
  int max_in_flight = 1;
  int64_t request_timeout_ns = 30 * kNsPerSecond;
  bool check = false;
};

class GrpcInferClient final : public InferClient {
 public:
  // `payloads`: inputs, and expected outputs when checking.
  static absl::StatusOr<std::unique_ptr<GrpcInferClient>> Create(boost::asio::io_context& io,
                                                                 const Clock& clock,
                                                                 GrpcClientOptions options,
                                                                 const std::vector<PayloadData>& payloads);
  ~GrpcInferClient() override;

  void Send(size_t payload_index, Done done) override;
  int max_in_flight() const override;
  size_t num_payloads() const override;
  void Close() override;

  class Impl;

 private:
  explicit GrpcInferClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ModelMetadata (and ModelConfig's max_batch_size) over gRPC.
absl::StatusOr<ModelMetadata> FetchGrpcModelMetadata(const GrpcTarget& target, const std::string& model,
                                                     const std::string& version, int timeout_ms);
// ModelConfig over gRPC as Triton's JSON (proto field names); nullopt when unavailable.
std::optional<std::string> FetchGrpcModelConfigJson(const GrpcTarget& target, const std::string& model,
                                                    int timeout_ms);
// ModelStatistics over gRPC; nullopt when unavailable.
std::optional<ServerStats> FetchGrpcModelStats(const GrpcTarget& target, const std::string& model,
                                               const std::string& version, int timeout_ms);

// SystemSharedMemoryRegister / Unregister (--shared-memory system over gRPC).
absl::Status GrpcSharedMemoryRegister(const GrpcTarget& target, const std::string& name,
                                      const std::string& key, uint64_t byte_size, int timeout_ms);
absl::Status GrpcSharedMemoryUnregister(const GrpcTarget& target, const std::string& name, int timeout_ms);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_GRPC_CLIENT_H_
