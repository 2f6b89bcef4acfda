// The KServe v2 gRPC messages and channel settings shared by infera bench's gRPC
// clients (grpc_client.h: unary ModelInfer; grpc_stream_client.h: ModelStreamInfer):
// requests built once per payload, outputs decoded from raw_output_contents, status
// code names for error kinds.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_GRPC_MESSAGES_H_
#define INFERA_TOOLS_BENCH_GRPC_MESSAGES_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "grpc_service.pb.h"
#include "tools/bench/bench_options.h"
#include "tools/bench/input_data.h"

namespace infera::bench {

// Where the gRPC clients connect, and how.
struct GrpcTarget {
  std::string address;  // host:port
  // TLS credentials (MakeBenchCredentials); null: plaintext.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
};

// TLS credentials from the PEM files of `tls` (the system's CAs when no root file is
// given), or null when !tls.use_ssl. InvalidArgument naming the flag and the file when
// one cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeBenchCredentials(const GrpcTlsFiles& tls);

// A channel to `target` without message size limits.
std::shared_ptr<grpc::Channel> MakeBenchChannel(const GrpcTarget& target);

// "OK", "UNAVAILABLE", ... ("code N" outside the known range).
std::string GrpcCodeName(grpc::StatusCode code);

// The ModelInferRequest of `payload`: binary tensors in raw_input_contents, or the
// shared-memory parameters when the payload lives in registered regions.
inference::ModelInferRequest BuildModelInferRequest(const std::string& model, const std::string& version,
                                                    const PayloadData& payload);

// The response's outputs as tensors; an error when an output lacks raw contents or
// has an unknown datatype.
absl::StatusOr<std::vector<Tensor>> DecodeModelInferOutputs(const inference::ModelInferResponse& response);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_GRPC_MESSAGES_H_
