// InferClient: one protocol's connections to the server under test — the seam where
// HTTP/1.1 (http_client.h: KServe v2 and OpenAI streaming) and gRPC (grpc_client.h)
// plug into the load driver.
//
// A client owns a pool of up to max_in_flight() connections (or streams), each with at
// most one request outstanding (HTTP/1.1 without pipelining; for gRPC one call per
// slot), and the encoded payloads of the run, addressed by index. The load driver
// decides *when* to send; the client only sends and reports.
//
// Contract:
//   - Send() is only called while fewer than max_in_flight() requests are outstanding.
//   - `done` runs exactly once per Send, on the driver's thread, and never inside
//     Send() itself (a client that fails at once posts the completion), so a driver
//     may call Send() again from `done`.
//   - Every response is checked: transport errors, non-success status and, when the
//     client was built with checking on, the output values (RequestResult::error_kind
//     "check").
//   - Close() drops every connection; outstanding requests complete with an error.
//
// Not thread-safe; owned by one driver (event-loop) thread.
#ifndef INFERA_TOOLS_BENCH_INFER_CLIENT_H_
#define INFERA_TOOLS_BENCH_INFER_CLIENT_H_

#include <cstddef>

#include "absl/functional/any_invocable.h"
#include "tools/bench/request_result.h"

namespace infera::bench {

class InferClient {
 public:
  using Done = absl::AnyInvocable<void(RequestResult) &&>;

  virtual ~InferClient() = default;

  // Starts one request with payload `payload_index` (< num_payloads()).
  virtual void Send(size_t payload_index, Done done) = 0;
  virtual int max_in_flight() const = 0;
  virtual size_t num_payloads() const = 0;
  virtual void Close() = 0;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_INFER_CLIENT_H_
