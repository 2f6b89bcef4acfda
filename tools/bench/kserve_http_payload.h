// The KServe v2 HTTP/REST wire format, client side: encoding complete infer requests
// (JSON tensors or Triton's binary tensor extension) and decoding infer responses.
//
// Requests are encoded once per payload before the run (the hot path only writes the
// bytes): the HTTP/1.1 head (POST, Host, Content-Type, Content-Length and, for binary
// inputs, Inference-Header-Content-Length) and the body, in one string. JSON data uses
// the server's own number formatting (codec/json_data_writer.h): shortest round-trip
// floats, full integers. With `binary_outputs` the request asks for binary outputs
// ("binary_data_output": true).
//
// Thread-safe (pure functions).
//
// Usage:
//   std::string request = EncodeInferHttpRequest(target, payload.inputs);
//   ASSIGN_OR_RETURN(auto outputs, DecodeInferHttpResponse(body, header_length));
#ifndef INFERA_TOOLS_BENCH_KSERVE_HTTP_PAYLOAD_H_
#define INFERA_TOOLS_BENCH_KSERVE_HTTP_PAYLOAD_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "tools/bench/input_data.h"

namespace infera::bench {

struct KServeHttpTarget {
  std::string host;           // the Host header, "127.0.0.1:8000"
  std::string model;
  std::string model_version;  // empty: the server's choice
  bool binary_inputs = false;
  bool binary_outputs = false;
};

// "/v2/models/{m}[/versions/{v}]" (the model name percent-encoded where needed).
std::string ModelPath(const std::string& model, const std::string& version);

// The whole HTTP/1.1 request: head + body.
// With `shm` (--shared-memory system), the inputs and the requested outputs name their
// shared-memory regions (shared_memory_region / _byte_size / _offset) and carry no data.
std::string EncodeInferHttpRequest(const KServeHttpTarget& target, const std::vector<Tensor>& inputs,
                                   const PayloadShm* shm = nullptr);

// The output tensors of a 200 response body. `header_length`: the
// Inference-Header-Content-Length value when present (binary outputs follow the JSON).
// Errors describe what is malformed.
absl::StatusOr<std::vector<Tensor>> DecodeInferHttpResponse(std::string_view body,
                                                            std::optional<size_t> header_length);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_KSERVE_HTTP_PAYLOAD_H_
